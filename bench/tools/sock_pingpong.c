// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's own transports on the paths the bench measures sroce and
 * rxe on (scripts/bench --insns): a ping-pong of SIZE-byte messages over
 * TCP or UDP with blocking sockets, as ibv_rc_pingpong -e waits for its
 * completions: the process sleeps until the message is there.
 *   sock_pingpong tcp|udp -s SIZE -n ITERS [-p PORT] [SERVER_ADDRESS]
 * Without an address it serves one client and exits.  Each message is
 * checked as ibv_rc_pingpong -c checks its own, one byte a 4 KiB page
 * (here with a value that changes with the iteration), so the user-space
 * work beside the transport is alike: checking every byte would cost more
 * instructions than the kernel's whole TCP path.  UDP carries one
 * datagram a message (SIZE at most 65507) and has no loss recovery: a lost
 * datagram ends the run with an error (after 10 s without a reply), which
 * on loopback does not happen.  A UDP client whose first datagram finds no
 * server yet (ICMP port unreachable) sends it again, for up to 10 s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "sock_pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

#define CHECK_STRIDE 4096

static void fill(unsigned char *buf, size_t size, unsigned long iter)
{
	for (size_t i = 0; i < size; i += CHECK_STRIDE)
		buf[i] = (unsigned char)(iter * 7 + i / CHECK_STRIDE * 13 + 1);
}

static int check(const unsigned char *buf, size_t size, unsigned long iter)
{
	for (size_t i = 0; i < size; i += CHECK_STRIDE)
		if (buf[i] != (unsigned char)(iter * 7 + i / CHECK_STRIDE * 13 + 1))
			return -1;
	return 0;
}

/* One whole message: TCP may deliver it in parts. */
static void recv_all(int fd, unsigned char *buf, size_t size, int stream)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = recv(fd, buf + got, size - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("recv");
		if (!stream && (size_t)n != size) {
			errno = EMSGSIZE;
			fail("a datagram of the wrong size");
		}
		got += (size_t)n;
	}
}

static void send_all(int fd, const unsigned char *buf, size_t size,
		     const struct sockaddr *to, socklen_t to_len)
{
	size_t sent = 0;

	while (sent < size) {
		ssize_t n = sendto(fd, buf + sent, size - sent, 0, to, to_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("send");
		sent += (size_t)n;
	}
}

/*
 * A UDP client's first datagram, sent again while it meets no server (ICMP
 * port unreachable: it was not delivered, so no copy reaches the server
 * twice), for up to 10 s; returns once the reply is there to read.
 */
static void udp_until_served(int fd, const unsigned char *buf, size_t size)
{
	for (int tries = 0; tries < 100; tries++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int err = 0;
		socklen_t len = sizeof(err);

		if (poll(&p, 1, 100) == 0)
			continue;		/* nothing yet: wait on */
		if (!(p.revents & POLLERR))
			return;			/* the reply */
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		usleep(100000);
		send_all(fd, buf, size, NULL, 0);
	}
	errno = ETIMEDOUT;
	fail("no UDP server answered");
}

static int open_socket(int stream, const char *addr, int port,
		       struct sockaddr_storage *peer, socklen_t *peer_len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = stream ? SOCK_STREAM : SOCK_DGRAM,
				  .ai_flags = addr ? 0 : AI_PASSIVE };
	struct addrinfo *ai;
	char service[16];
	int fd, one = 1;

	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(addr, service, &hints, &ai))
		fail("getaddrinfo");
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (fd < 0)
		fail("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr) {
		memcpy(peer, ai->ai_addr, ai->ai_addrlen);
		*peer_len = ai->ai_addrlen;
		for (int i = 0; connect(fd, ai->ai_addr, ai->ai_addrlen); i++) {
			if (i == 100)	/* the server starts at the same time */
				fail("connect");
			usleep(100000);
		}
	} else if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
		   (stream && listen(fd, 1))) {
		fail("bind");
	}
	freeaddrinfo(ai);
	if (stream && !addr) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			fail("accept");
		close(fd);
		fd = c;
	}
	if (stream) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	} else {
		struct timeval limit = { .tv_sec = 10 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage peer;
	socklen_t peer_len = 0;
	unsigned long size = 0, iters = 0;
	const char *addr = NULL;
	unsigned char *buf;
	int stream, port = 18515, opt, fd;

	if (argc < 2 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "udp"))) {
		fprintf(stderr, "usage: sock_pingpong tcp|udp -s SIZE -n ITERS [-p PORT] [ADDRESS]\n");
		return 2;
	}
	stream = !strcmp(argv[1], "tcp");
	optind = 2;
	while ((opt = getopt(argc, argv, "s:n:p:")) != -1) {
		switch (opt) {
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'p': port = atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind < argc)
		addr = argv[optind];
	if (!size || !iters || (!stream && size > 65507)) {
		fprintf(stderr, "sock_pingpong: -s SIZE (UDP: at most 65507) and -n ITERS\n");
		return 2;
	}
	buf = malloc(size);
	if (!buf)
		fail("malloc");
	fd = open_socket(stream, addr, port, &peer, &peer_len);
	for (unsigned long i = 0; i < iters; i++) {
		if (addr) {
			fill(buf, size, i);
			send_all(fd, buf, size, NULL, 0);
			if (!stream && i == 0)
				udp_until_served(fd, buf, size);
			recv_all(fd, buf, size, stream);
		} else {
			struct sockaddr_storage from;
			socklen_t from_len = sizeof(from);

			if (stream) {
				recv_all(fd, buf, size, 1);
			} else {
				ssize_t n = recvfrom(fd, buf, size, 0,
						     (struct sockaddr *)&from, &from_len);
				if (n != (ssize_t)size)
					fail("recvfrom");
			}
			if (check(buf, size, i)) {
				fprintf(stderr, "sock_pingpong: message %lu differs\n", i);
				return 1;
			}
			send_all(fd, buf, size, stream ? NULL : (struct sockaddr *)&from,
				 stream ? 0 : from_len);
		}
	}
	if (addr && check(buf, size, iters - 1)) {
		fprintf(stderr, "sock_pingpong: the last reply differs\n");
		return 1;
	}
	printf("%lu iters of %lu bytes over %s\n", iters, size, argv[1]);
	return 0;
}
