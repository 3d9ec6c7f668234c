/* SPDX-License-Identifier: BSD-3-Clause */
/* Where gntshare's messages go (both sides); see gntshare.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gntshare/gntshare.h"

static void (*logger)(int, const char *);

void
gnts_set_logger(void (*fn)(int level, const char *msg))
{
	logger = fn;
}

size_t
gnts_log_stamp(int level, char *buf, size_t len)
{
	static const char *const names[8] = { "EMERG", "ALERT", "CRIT",
		"ERROR", "WARN", "NOTICE", "INFO", "DEBUG" };
	struct timespec ts;
	struct tm tm;
	int n;

	if (len == 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s ",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		     names[level >= 0 && level <= 7 ? level : GNTS_LOG_INFO]);
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

void
gnts_log(int level, const char *fmt, ...)
{
	char buf[512], stamp[GNTS_LOG_STAMP_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (logger != NULL) {
		logger(level, buf);
	} else {
		gnts_log_stamp(level, stamp, sizeof(stamp));
		fprintf(stderr, "%sgntshare: %s\n", stamp, buf);
	}
}

const char *
gnts_esc(const char *s, size_t max, char *buf, size_t len)
{
	size_t i, o = 0;

	if (len == 0)
		return buf;
	for (i = 0; i < max && s[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)s[i];
		int w = ch >= 0x20 && ch < 0x7f && ch != '\\' ? 1 : 4;

		if (o + (size_t)w + 1 > len) {
			/* Cut: end in "..." where there is room for it. */
			if (len > 4) {
				if (o > len - 4)
					o = len - 4;
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (w == 1)
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	buf[o] = '\0';
	return buf;
}

uint64_t
gnts_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
gnts_ratelimit(struct gnts_ratelimit *rl, uint32_t per_s, uint64_t now_ms)
{
	if (now_ms - rl->window_ms >= 1000) {
		rl->window_ms = now_ms;
		rl->logged = 0;
	}
	if (rl->logged < per_s) {
		rl->logged++;
		return 1;
	}
	rl->quiet++;
	return 0;
}

uint32_t
gnts_ratelimit_quiet(struct gnts_ratelimit *rl, uint64_t now_ms)
{
	uint32_t n = rl->quiet;

	if (n == 0 || now_ms - rl->window_ms < 1000)
		return 0;
	rl->quiet = 0;
	return n;
}
