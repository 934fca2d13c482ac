/* SPDX-License-Identifier: MIT */
/*
 * The out-of-band exchange of a two-sided verbs case: QP numbers, PSNs,
 * GIDs, rkeys and addresses go over one TCP connection between the two
 * roles, the way ibv_rc_pingpong and perftest do it, but every step has a
 * deadline: the server accepts until its deadline and then closes its
 * listener; the client retries a refused connect with backoff until its
 * deadline; every read and write is a poll with the time that is left.
 * A side that dies shows up on the other as EOF, never as a hang.
 *
 * Messages are length-prefixed (4 bytes, big-endian) and at most
 * OOB_MSG_MAX bytes; the peer is not trusted: a bad length is an error.
 */
#ifndef RQ_OOB_H
#define RQ_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OOB_MSG_MAX 4096

struct oob {
	int fd;		/* the connection, -1 when closed */
	bool server;
};

/*
 * Server (listen on bind_addr or any, accept one peer) or client (connect
 * to peer_addr), until deadline_ms (a now_ms() value).  0 or -errno with
 * why: "no client connected to port 18515 within 30.0 s", ...
 */
int oob_open(struct oob *o, bool server, const char *bind_addr, const char *peer_addr,
	     int port, int64_t deadline_ms, char *why, size_t whysz);
int oob_send(struct oob *o, const void *msg, size_t len, int64_t deadline_ms,
	     char *why, size_t whysz);
/* Receive one message of at most size bytes; its length in *len. */
int oob_recv(struct oob *o, void *buf, size_t size, size_t *len, int64_t deadline_ms,
	     char *why, size_t whysz);
/* Send mine, receive theirs (text lines; theirs NUL-terminated). */
int oob_exchange(struct oob *o, const char *mine, char *theirs, size_t size,
		 int64_t deadline_ms, char *why, size_t whysz);
/* A barrier: both sides reach it or one learns why not. */
int oob_sync(struct oob *o, const char *tag, int64_t deadline_ms, char *why, size_t whysz);
void oob_close(struct oob *o);

#endif
