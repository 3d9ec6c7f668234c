/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading rule files: one rule a line, words separated by blanks, `#`
 * starts a comment, blank lines are skipped, a word in double quotes may
 * hold blanks and `#` (the quotes stay on the word; see unquote()).
 * Errors name the file and line:  "routes.txt:7: bad prefix "10.0.0.1/8":
 * host bits set".
 *
 *   struct rfile rf;
 *   if (rfile_open(&rf, path) < 0)
 *           return -1;
 *   while ((n = rfile_next(&rf)) > 0)
 *           if (strcmp(rf.word[0], "x") != 0)
 *                   return rfile_error(&rf, "unknown rule '%s'", rf.word[0]);
 *   rfile_close(&rf);          // n < 0: an error was printed
 */
#ifndef XNV_EX_RULES_H
#define XNV_EX_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RFILE_LINE_MAX  1024	/* bytes of one line, newline included */
#define RFILE_WORDS_MAX 32	/* words of one line */

struct rfile {
	FILE *f;
	const char *path;
	unsigned line;			/**< number of the line in word[] */
	int n_words;
	char *word[RFILE_WORDS_MAX];	/**< into buf, NUL-terminated */
	char buf[RFILE_LINE_MAX + 1];
};

/** Open @p path.  @return 0, or -1 after printing "PATH: reason". */
int rfile_open(struct rfile *rf, const char *path);

/** Read the next line that has words.  @return the number of words, 0 at
 *  the end of the file, -1 after printing an error (line too long, too
 *  many words, unterminated quote, read error). */
int rfile_next(struct rfile *rf);

/** Print "PATH:LINE: message" on stderr.  @return -1. */
int rfile_error(const struct rfile *rf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Close (NULL-safe, idempotent). */
void rfile_close(struct rfile *rf);

/**
 * A quoted word "..." into bytes: escapes \\, \", \n, \r, \t, \0 and \xHH.
 * @return the number of bytes written to @p out (at most @p max), or -1
 *   with @p why set when the word is not a well-formed quoted string.
 */
int unquote(const char *word, uint8_t *out, size_t max, const char **why);

#endif /* XNV_EX_RULES_H */
