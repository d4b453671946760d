// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* setup_udp_tunnel_sock() and udp_tunnel_sock_release() take a struct
 * sock instead of a struct socket (after 6.12; both in 7.2).
 */
#include <net/udp_tunnel.h>

void sroce_probe(struct net *net, struct sock *sk,
		 struct udp_tunnel_sock_cfg *cfg);
void sroce_probe(struct net *net, struct sock *sk,
		 struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sk, cfg);
	udp_tunnel_sock_release(sk);
}
