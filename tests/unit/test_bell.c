/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the host mode doorbells (gntshare/bell_sock.c, bell.h):
 * both kinds, the pipe the core kicks through (what an NF of this tree
 * asks for) and the socketpair alone (an NF that does not ask), each
 * test run once per kind (its state says which), and their handover at
 * attach (host_server.c, host_client.c) over a real unix socket
 * (host_fixture.h).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_fixture.h"
#include "../../gntshare/host_msg.h"

static int with_pipe = 1, sock_only = 0;

#define KIND(state) (*(int *)*(state))

/* 1 if @p fd is readable right now (or at its end: a closed peer). */
static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

/* A pair as the core makes it, the NF's end opened from its fds. */
static void
make_pair(int pipe_too, struct gnts_bell **core, struct gnts_bell **nf)
{
	int fds[2];

	assert_int_equal(gnts_bell_host_pair(core, fds, pipe_too), 0);
	assert_true(pipe_too ? fds[1] >= 0 : fds[1] == -1);
	*nf = gnts_bell_host_open(fds[0], fds[1]);
	assert_non_null(*nf);
}

static void
test_kick_wakes_the_other_end_once(void **state)
{
	struct gnts_bell *core, *nf;
	const char *kind = KIND(state) ? "pipe" : "socketpair";

	make_pair(KIND(state), &core, &nf);
	assert_false(readable(gnts_bell_fd(core)));
	assert_false(readable(gnts_bell_fd(nf)));
	/* NF -> core: only the core's fd wakes; an ack takes it. */
	assert_int_equal(gnts_bell_kick(nf), 0);
	assert_true(readable(gnts_bell_fd(core)));
	assert_false(readable(gnts_bell_fd(nf)));
	assert_int_equal(gnts_bell_ack(core), 1);
	assert_false(readable(gnts_bell_fd(core)));
	assert_int_equal(gnts_bell_ack(core), 0);	/* spurious: 0 */
	/* core -> NF, three kicks before the ack: all taken at once. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(gnts_bell_kick(core), 0);
	assert_true(readable(gnts_bell_fd(nf)));
	assert_false(readable(gnts_bell_fd(core)));
	assert_int_equal(gnts_bell_ack(nf), 3);
	assert_false(readable(gnts_bell_fd(nf)));
	assert_true(core->kicks == 3 && nf->acked == 3 && nf->kicks == 1 &&
		    core->acked == 1);
	assert_string_equal(core->ops->name, kind);
	assert_string_equal(nf->ops->name, kind);
	gnts_bell_close(nf);
	gnts_bell_close(core);
}

/* The core's kick never blocks: not when the NF never reads (the buffer
 * fills: a kick is pending anyway), not when the NF made its own end
 * blocking (its open file, or a file the core does not write through). */
static void
test_core_kick_never_blocks(void **state)
{
	struct gnts_bell *core, *nf;

	make_pair(KIND(state), &core, &nf);
	assert_int_equal(fcntl(gnts_bell_fd(nf), F_SETFL, 0), 0);
	assert_int_equal(fcntl(nf->kick_fd, F_SETFL, 0), 0);
	alarm(20);	/* a blocked kick fails the test, not hangs it */
	for (int i = 0; i < 200000; i++)
		assert_int_equal(gnts_bell_kick(core), 0);
	alarm(0);
	assert_int_equal(core->kicks, 200000);
	/* An ack reads a bounded amount: a flood cannot keep it busy. */
	int got = gnts_bell_ack(nf);

	assert_true(got > 0 && got <= 256);
	assert_true(readable(gnts_bell_fd(nf)));
	gnts_bell_close(nf);
	gnts_bell_close(core);
}

/* A dead peer: its end closed.  The fd stays readable; ack says -EPIPE so
 * that the waiter stops waiting on it; the NF's kick fails, the core's
 * fails on the socketpair and, on the pipe, goes nowhere (the core holds
 * a reader of it: a kick at a dead NF fills it at most).  No SIGPIPE
 * either way: below, as main ignores it here. */
static void
test_peer_closed(void **state)
{
	struct gnts_bell *core, *nf;

	make_pair(KIND(state), &core, &nf);
	gnts_bell_close(nf);
	assert_true(readable(gnts_bell_fd(core)));
	assert_int_equal(gnts_bell_ack(core), -EPIPE);
	assert_int_equal(gnts_bell_kick(core), KIND(state) ? 0 : -EPIPE);
	gnts_bell_close(core);

	make_pair(KIND(state), &core, &nf);
	gnts_bell_close(core);
	assert_true(readable(gnts_bell_fd(nf)));
	assert_int_equal(gnts_bell_ack(nf), -EPIPE);
	assert_int_equal(gnts_bell_kick(nf), -EPIPE);
	gnts_bell_close(nf);
}

/* In a child whose SIGPIPE is SIG_DFL (it kills), unblocked or with
 * @p block blocked, a kick at a closed peer: the NF's at the core's
 * closed end (@p nf_kicks), else the core's at the NF's.  @return the
 * child's exit code: 0 when the kick said what test_peer_closed says,
 * the mask is as it was and no SIGPIPE is pending (none was raised);
 * else 128 + the signal that killed it. */
static int
kick_closed_in_child(int pipe_too, int nf_kicks, int block)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct gnts_bell *core, *nf;
		sigset_t pipe_only, mask, pending;
		int rc;

		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&pipe_only);
		sigaddset(&pipe_only, SIGPIPE);
		sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &pipe_only, NULL);
		make_pair(pipe_too, &core, &nf);
		gnts_bell_close(nf_kicks ? core : nf);
		rc = gnts_bell_kick(nf_kicks ? nf : core);
		if (rc != (!nf_kicks && pipe_too ? 0 : -EPIPE))
			_exit(1);
		sigprocmask(SIG_BLOCK, NULL, &mask);
		sigpending(&pending);
		_exit(sigismember(&mask, SIGPIPE) != block ? 2 :
		      sigismember(&pending, SIGPIPE) ? 3 : 0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* An NF does not ignore SIGPIPE (libxnv leaves its signals alone): its
 * kick at a core that is gone (killed while it slept, its sleep word
 * still set) must say -EPIPE, not kill it.  Nor may the core's kick at a
 * dead NF raise one (a program using gntshare need not ignore it). */
static void
test_kick_at_closed_peer_raises_no_sigpipe(void **state)
{
	for (int nf_kicks = 0; nf_kicks < 2; nf_kicks++)
		for (int block = 0; block < 2; block++)
			assert_int_equal(kick_closed_in_child(KIND(state),
							      nf_kicks, block),
					 0);
}

/* 1 if @p fd is closed. */
static int
closed(int fd)
{
	return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

/* What the NF is handed is checked: a unix stream socket, and a pipe's
 * read end or none; anything else (a pipe for the socket, a datagram
 * socket, an IP socket, a pipe's write end or a socket for the pipe, no
 * fd) is refused, and both fds closed. */
TEST(test_open_checks_the_fds)
{
	int p[2], dg[2], st[2], udp;

	assert_int_equal(pipe(p), 0);
	assert_null(gnts_bell_host_open(p[0], -1));
	assert_int_equal(errno, EINVAL);
	assert_true(closed(p[0]));
	close(p[1]);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg), 0);
	assert_null(gnts_bell_host_open(dg[0], -1));
	assert_true(closed(dg[0]));
	close(dg[1]);
	udp = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(udp >= 0);
	assert_null(gnts_bell_host_open(udp, -1));
	assert_true(closed(udp));
	assert_null(gnts_bell_host_open(-1, -1));
	assert_int_equal(errno, EINVAL);
	/* The second fd: a pipe's write end, a socket: refused. */
	for (int bad = 0; bad < 2; bad++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, st), 0);
		assert_int_equal(pipe(p), 0);
		assert_null(gnts_bell_host_open(st[0], bad ? st[1] : p[1]));
		assert_int_equal(errno, EINVAL);
		assert_true(closed(st[0]) && closed(bad ? st[1] : p[1]));
		close(p[0]);
		if (!bad)
			close(st[1]);
		else
			close(p[1]);
	}
	/* The pipe's read end is made non-blocking (the NF's acks never
	 * block), whatever it came as. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, st), 0);
	assert_int_equal(pipe(p), 0);
	struct gnts_bell *b = gnts_bell_host_open(st[0], p[0]);

	assert_non_null(b);
	assert_true(fcntl(gnts_bell_fd(b), F_GETFL) & O_NONBLOCK);
	assert_int_equal(gnts_bell_ack(b), 0);
	gnts_bell_close(b);
	close(st[1]);
	close(p[1]);
}

/* ---- at attach (setup_server() attached "fw-0" without a bell) -------- */

TEST(test_attach_with_bell_hands_over_a_pair)
{
	struct gnts_attach_rsp rsp;
	struct gnts_client *c = NULL;
	struct gnts_bell *mine, *core;

	/* Not asked: none, on both sides. */
	assert_null(gnts_client_bell(S.c));
	assert_null(snap().attach_bell[0]);
	assert_int_equal(attach_flags("fw-1", "blue", GNTS_REQ_BELL, &c,
				      &rsp), 0);
	assert_true(rsp.flags & GNTS_RSP_BELL);
	mine = gnts_client_bell(c);
	core = snap().attach_bell[1];
	assert_non_null(mine);
	assert_non_null(core);
	/* An NF of this tree asks for the pipe and gets it. */
	assert_true(snap().attach_req[1].flags & GNTS_REQ_BELL_PIPE);
	assert_string_equal(mine->ops->name, "pipe");
	assert_string_equal(core->ops->name, "pipe");
	/* They are two ends of one pair: each side's kick wakes the other. */
	assert_int_equal(gnts_bell_kick(mine), 0);
	LOCKED(assert_true(readable(gnts_bell_fd(core)));
	       assert_int_equal(gnts_bell_ack(core), 1);
	       assert_int_equal(gnts_bell_kick(core), 0));
	assert_true(readable(gnts_bell_fd(mine)));
	assert_int_equal(gnts_bell_ack(mine), 1);
	gnts_client_close(c);
	assert_int_equal(wait_deaths(1), 1);
}

/* An NF that asks for a doorbell but not for the pipe (an older libxnv:
 * its ATTACH by hand) gets the socketpair alone: one fd, a unix stream
 * socket, and the core kicks it on that. */
TEST(test_attach_without_the_pipe_gets_the_socketpair)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct gnts_msg m;
	struct gnts_bell *mine, *core;
	int sock, fds[GNTS_MSG_FDS];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", S.path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(sock >= 0);
	assert_int_equal(connect(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	gnts_msg_init(&m, GNTS_MSG_ATTACH);
	snprintf(m.u.req.name, sizeof(m.u.req.name), "fw-old");
	snprintf(m.u.req.service, sizeof(m.u.req.service), "firewall");
	snprintf(m.u.req.group, sizeof(m.u.req.group), "blue");
	m.u.req.flags = GNTS_REQ_BELL;
	assert_int_equal(gnts_msg_send(sock, &m, NULL, 0), 0);
	assert_int_equal(gnts_msg_recv(sock, &m, fds, 0), 1);
	assert_int_equal(m.type, GNTS_MSG_ATTACH_OK);
	assert_int_equal(m.u.rsp.flags, GNTS_RSP_BELL);
	assert_true(fds[0] >= 0);
	assert_int_equal(fds[1], -1);
	mine = gnts_bell_host_open(fds[0], -1);
	assert_non_null(mine);
	core = snap().attach_bell[1];
	assert_non_null(core);
	assert_string_equal(core->ops->name, "socketpair");
	LOCKED(assert_int_equal(gnts_bell_kick(core), 0));
	assert_true(readable(gnts_bell_fd(mine)));
	assert_int_equal(gnts_bell_ack(mine), 1);
	gnts_bell_close(mine);
	close(sock);
	assert_int_equal(wait_deaths(1), 1);
}

/* A refused attach gets no fds (and the server closes its end). */
TEST(test_refused_attach_gets_no_bell)
{
	struct gnts_attach_rsp rsp;
	struct gnts_client *c = NULL;
	int before = fcntl(100, F_GETFD);

	assert_int_equal(attach_flags("fw-x", "closed", GNTS_REQ_BELL, &c,
				      &rsp), -EPERM);
	assert_null(c);
	assert_int_equal(fcntl(100, F_GETFD), before);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define BOTH(f) cmocka_unit_test_prestate(f, &with_pipe), \
		cmocka_unit_test_prestate(f, &sock_only)
		BOTH(test_kick_wakes_the_other_end_once),
		BOTH(test_core_kick_never_blocks),
		BOTH(test_peer_closed),
		BOTH(test_kick_at_closed_peer_raises_no_sigpipe),
		cmocka_unit_test(test_open_checks_the_fds),
		T(test_attach_with_bell_hands_over_a_pair),
		T(test_attach_without_the_pipe_gets_the_socketpair),
		T(test_refused_attach_gets_no_bell),
	};

	signal(SIGPIPE, SIG_IGN);
	gnts_set_logger(capture_log);
	return cmocka_run_group_tests_name("gntshare_bell", tests, NULL, NULL);
}
