/* SPDX-License-Identifier: BSD-3-Clause */
/* Readiness and stop notices to the service manager (notify.h). */
#include <stdlib.h>
#include <string.h>

#ifdef XNV_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "core.h"
#include "notify.h"

#ifdef XNV_HAVE_SYSTEMD
void
xnv_notify(const char *state)
{
	int rc = sd_notify(0, state);

	if (rc < 0)
		XLOG(WARNING, "cannot notify the service manager at %s: %s\n",
		     getenv("NOTIFY_SOCKET"), strerror(-rc));
}
#else
void
xnv_notify(const char *state)
{
	static int said;

	(void)state;
	if (getenv("NOTIFY_SOCKET") == NULL || said)
		return;
	said = 1;
	XLOG(WARNING, "NOTIFY_SOCKET is set, but this xnv-core was built "
	     "without libsystemd: the service manager is not told it is "
	     "ready\n");
}
#endif
