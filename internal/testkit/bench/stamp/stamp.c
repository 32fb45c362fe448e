/*
 * stamp prints the time, in nanoseconds since the epoch, and exits: what
 * `date +%s%N` prints, without date's dynamic linking and locale set-up.
 * The benchmark's handoff test runs it as each holder's command, so that
 * as little as possible of every measured interval (one command's exit to
 * the next one's start) is the probe's own start-up. scripts/bench.sh
 * links it statically; arguments are ignored.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 1;
	printf("%lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	return 0;
}
