/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the host mode doorbells (gntshare/bell_sock.c, bell.h)
 * and of their handover at attach (host_server.c, host_client.c) over a
 * real unix socket (host_fixture.h).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_fixture.h"

/* 1 if @p fd is readable right now (or at its end: a closed peer). */
static int
readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP));
}

/* A pair as the core makes it, the NF's end opened from its fd. */
static void
make_pair(struct gnts_bell **core, struct gnts_bell **nf)
{
	int fd;

	assert_int_equal(gnts_bell_sock_pair(core, &fd), 0);
	*nf = gnts_bell_sock_open(fd);
	assert_non_null(*nf);
}

TEST(test_kick_wakes_the_other_end_once)
{
	struct gnts_bell *core, *nf;

	make_pair(&core, &nf);
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
	assert_int_equal(gnts_bell_ack(nf), 3);
	assert_true(core->kicks == 3 && nf->acked == 3 && nf->kicks == 1 &&
		    core->acked == 1);
	assert_string_equal(core->ops->name, "socketpair");
	gnts_bell_close(nf);
	gnts_bell_close(core);
}

/* The core's kick never blocks: not when the NF never reads (the socket
 * buffer fills: a kick is pending anyway), not when the NF made its own
 * end blocking (its open file, not the core's). */
TEST(test_core_kick_never_blocks)
{
	struct gnts_bell *core, *nf;

	make_pair(&core, &nf);
	assert_int_equal(fcntl(gnts_bell_fd(nf), F_SETFL, 0), 0);
	alarm(20);	/* a blocked kick fails the test, not hangs it */
	for (int i = 0; i < 200000; i++)
		assert_int_equal(gnts_bell_kick(core), 0);
	alarm(0);
	/* An ack reads a bounded amount: a flood cannot keep it busy. */
	int got = gnts_bell_ack(nf);

	assert_true(got > 0 && got <= 256);
	assert_true(readable(gnts_bell_fd(nf)));
	gnts_bell_close(nf);
	gnts_bell_close(core);
}

/* A dead peer: its end closed.  The fd stays readable; ack says -EPIPE so
 * that the waiter stops waiting on it; a kick fails (and raises no
 * SIGPIPE: below, as main ignores it here). */
TEST(test_peer_closed)
{
	struct gnts_bell *core, *nf;

	make_pair(&core, &nf);
	gnts_bell_close(nf);
	assert_true(readable(gnts_bell_fd(core)));
	assert_int_equal(gnts_bell_ack(core), -EPIPE);
	assert_int_equal(gnts_bell_kick(core), -EPIPE);
	gnts_bell_close(core);
}

/* In a child whose SIGPIPE is SIG_DFL (it kills), unblocked or with
 * @p block blocked, a kick at a closed peer.  @return the child's exit
 * code: 0 when the kick said -EPIPE, the mask is as it was and no SIGPIPE
 * is pending (none was raised); else 128 + the signal that killed it. */
static int
kick_closed_in_child(int block)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct gnts_bell *core, *nf;
		sigset_t pipe_only, mask, pending;

		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&pipe_only);
		sigaddset(&pipe_only, SIGPIPE);
		sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &pipe_only, NULL);
		make_pair(&core, &nf);
		gnts_bell_close(core);
		if (gnts_bell_kick(nf) != -EPIPE)
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
 * still set) must say -EPIPE, not kill it. */
TEST(test_kick_at_closed_peer_raises_no_sigpipe)
{
	assert_int_equal(kick_closed_in_child(0), 0);
	assert_int_equal(kick_closed_in_child(1), 0);
}

/* What the NF is handed is checked: a unix stream socket; anything else
 * (a pipe, a datagram socket, an IP socket, no fd) is refused and
 * closed. */
TEST(test_open_checks_the_fd)
{
	int p[2], dg[2], udp;

	assert_int_equal(pipe(p), 0);
	assert_null(gnts_bell_sock_open(p[0]));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fcntl(p[0], F_GETFD), -1);	/* closed */
	close(p[1]);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, dg), 0);
	assert_null(gnts_bell_sock_open(dg[0]));
	assert_int_equal(fcntl(dg[0], F_GETFD), -1);
	close(dg[1]);
	udp = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(udp >= 0);
	assert_null(gnts_bell_sock_open(udp));
	assert_int_equal(fcntl(udp, F_GETFD), -1);
	assert_null(gnts_bell_sock_open(-1));
	assert_int_equal(errno, EINVAL);
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
		cmocka_unit_test(test_kick_wakes_the_other_end_once),
		cmocka_unit_test(test_core_kick_never_blocks),
		cmocka_unit_test(test_peer_closed),
		cmocka_unit_test(test_kick_at_closed_peer_raises_no_sigpipe),
		cmocka_unit_test(test_open_checks_the_fd),
		T(test_attach_with_bell_hands_over_a_pair),
		T(test_refused_attach_gets_no_bell),
	};

	signal(SIGPIPE, SIG_IGN);
	gnts_set_logger(capture_log);
	return cmocka_run_group_tests_name("gntshare_bell", tests, NULL, NULL);
}
