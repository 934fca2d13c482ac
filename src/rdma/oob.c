/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "rdma/oob.h"
#include "core/util.h"

static int left_ms(int64_t deadline)
{
	int64_t l = deadline - now_ms();

	return l <= 0 ? 0 : l > 1000000 ? 1000000 : (int)l;
}

static int set_addr(struct sockaddr_in *sa, const char *addr, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (!addr || !*addr) {
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
		return 0;
	}
	return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static void tune(int fd)
{
	int one = 1;

	/* small request/answer messages: Nagle would add a delayed-ACK wait to each */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int oob_accept(struct oob *o, const char *bind_addr, int port, int64_t deadline,
		      char *why, size_t whysz)
{
	struct sockaddr_in sa;
	int lfd, one = 1, ret;
	double secs = (deadline - now_ms()) / 1000.0;

	if (set_addr(&sa, bind_addr, port) < 0) {
		snprintf(why, whysz, "bad bind address '%s'", bind_addr);
		return -EINVAL;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0) {
		ret = -errno;
		snprintf(why, whysz, "socket: %s", strerror(errno));
		return ret;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
		ret = -errno;
		snprintf(why, whysz, "listen on %s:%d: %s", bind_addr && *bind_addr ? bind_addr : "*",
			 port, strerror(errno));
		close(lfd);
		return ret;
	}
	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int n = poll(&pfd, 1, left_ms(deadline));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, whysz, "no peer connected to port %d within %.1f s", port, secs);
			ret = -ETIMEDOUT;
			break;
		}
		o->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (o->fd >= 0) {
			ret = 0;
			break;
		}
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
			ret = -errno;
			snprintf(why, whysz, "accept on port %d: %s", port, strerror(errno));
			break;
		}
	}
	close(lfd);	/* one peer per pair: never leave a listener behind */
	return ret;
}

static int oob_connect(struct oob *o, const char *peer, int port, int64_t deadline,
		       char *why, size_t whysz)
{
	struct sockaddr_in sa;
	int backoff = 10, last = 0, tries = 0;
	double secs = (deadline - now_ms()) / 1000.0;

	if (!peer || set_addr(&sa, peer, port) < 0 || !*peer) {
		snprintf(why, whysz, "bad peer address '%s'", peer ? peer : "(none)");
		return -EINVAL;
	}
	do {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int err = 0;
		socklen_t len = sizeof(err);

		if (fd < 0) {
			last = errno;
			break;
		}
		tries++;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			o->fd = fd;
			return 0;
		}
		if (errno == EINPROGRESS) {
			int wait = left_ms(deadline);

			if (poll(&pfd, 1, wait > 2000 ? 2000 : wait) == 1 &&
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
				o->fd = fd;
				return 0;
			}
			last = err ? err : ETIMEDOUT;
		} else {
			last = errno;
		}
		close(fd);
		/* the server side may not listen yet: retry refused connects */
		if (left_ms(deadline) <= 0)
			break;
		{
			struct timespec ts = { 0, 0 };
			int nap = backoff < left_ms(deadline) ? backoff : left_ms(deadline);

			ts.tv_sec = nap / 1000;
			ts.tv_nsec = (long)(nap % 1000) * 1000000L;
			nanosleep(&ts, NULL);
		}
		if (backoff < 500)
			backoff *= 2;
	} while (left_ms(deadline) > 0);
	snprintf(why, whysz, "connect to %s:%d failed for %.1f s (%d tries): %s", peer, port,
		 secs, tries, strerror(last ? last : ETIMEDOUT));
	return -(last ? last : ETIMEDOUT);
}

int oob_open(struct oob *o, bool server, const char *bind_addr, const char *peer_addr,
	     int port, int64_t deadline_ms, char *why, size_t whysz)
{
	int ret;

	o->fd = -1;
	o->server = server;
	if (port <= 0 || port > 65535) {
		snprintf(why, whysz, "no out-of-band port (got %d)", port);
		return -EINVAL;
	}
	ret = server ? oob_accept(o, bind_addr, port, deadline_ms, why, whysz)
		     : oob_connect(o, peer_addr, port, deadline_ms, why, whysz);
	if (ret == 0)
		tune(o->fd);
	return ret;
}

static int io_all(struct oob *o, bool wr, void *buf, size_t len, int64_t deadline,
		  char *why, size_t whysz)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = o->fd, .events = wr ? POLLOUT : POLLIN };
		ssize_t n;
		int r = poll(&pfd, 1, left_ms(deadline));

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			snprintf(why, whysz, "peer did not %s within its deadline",
				 wr ? "take our message" : "answer");
			return -ETIMEDOUT;
		}
		n = wr ? send(o->fd, p, len, MSG_NOSIGNAL) : recv(o->fd, p, len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			int e = errno;

			snprintf(why, whysz, "out-of-band %s: %s (the other side failed?)",
				 wr ? "send" : "receive", strerror(e));
			return -e;
		}
		if (n == 0) {
			snprintf(why, whysz, "the other side closed the out-of-band connection");
			return -ECONNRESET;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int oob_send(struct oob *o, const void *msg, size_t len, int64_t deadline_ms,
	     char *why, size_t whysz)
{
	uint8_t hdr[4] = { (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			   (uint8_t)len };
	int ret;

	if (o->fd < 0 || len > OOB_MSG_MAX) {
		snprintf(why, whysz, "out-of-band message too long (%zu)", len);
		return -EINVAL;
	}
	ret = io_all(o, true, hdr, 4, deadline_ms, why, whysz);
	return ret ? ret : io_all(o, true, (void *)msg, len, deadline_ms, why, whysz);
}

int oob_recv(struct oob *o, void *buf, size_t size, size_t *len, int64_t deadline_ms,
	     char *why, size_t whysz)
{
	uint8_t hdr[4];
	size_t n;
	int ret;

	if (o->fd < 0)
		return -EBADF;
	ret = io_all(o, false, hdr, 4, deadline_ms, why, whysz);
	if (ret)
		return ret;
	n = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	if (n > OOB_MSG_MAX || n > size) {
		snprintf(why, whysz, "out-of-band message of %zu bytes refused (max %zu)", n,
			 size < OOB_MSG_MAX ? size : (size_t)OOB_MSG_MAX);
		return -EPROTO;
	}
	*len = n;
	return io_all(o, false, buf, n, deadline_ms, why, whysz);
}

int oob_exchange(struct oob *o, const char *mine, char *theirs, size_t size,
		 int64_t deadline_ms, char *why, size_t whysz)
{
	size_t n = 0;
	int ret;

	if (size < 1)
		return -EINVAL;
	/* both send first: the messages are small, the kernel buffers them */
	ret = oob_send(o, mine, strlen(mine), deadline_ms, why, whysz);
	if (!ret)
		ret = oob_recv(o, theirs, size - 1, &n, deadline_ms, why, whysz);
	theirs[ret ? 0 : n] = '\0';
	if (!ret && memchr(theirs, '\0', n)) {
		snprintf(why, whysz, "out-of-band message holds a NUL byte");
		return -EPROTO;
	}
	return ret;
}

int oob_sync(struct oob *o, const char *tag, int64_t deadline_ms, char *why, size_t whysz)
{
	char buf[64];
	int ret = oob_exchange(o, tag, buf, sizeof(buf), deadline_ms, why, whysz);

	if (!ret && strcmp(buf, tag)) {
		snprintf(why, whysz, "out of step with the other side: it is at '%.20s', we at '%s'",
			 buf, tag);
		return -EPROTO;
	}
	return ret;
}

void oob_close(struct oob *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
