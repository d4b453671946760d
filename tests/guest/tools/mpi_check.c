/*
 * mpi_check: the two communication patterns MPI applications are made of,
 * with every byte checked (test_mpi.py runs it under Open MPI over UCX on
 * sroce).
 *
 *   allreduce  MPI_Allreduce (sum) of vectors whose every element depends
 *              on the rank and the index, so a lost, duplicated or
 *              misplaced contribution changes the sum.
 *   ring       each rank sends to rank+1 and receives from rank-1 at once
 *              (MPI_Sendrecv), buffers filled with a pattern of the sender's
 *              rank, the size and the round.
 *
 * Sizes run from 8 bytes (UCX's eager, inline sends) to 4 MiB (rendezvous:
 * RDMA READ or WRITE of the user's buffer).  Prints one line per pattern
 * and size on rank 0; exits 1 on the first wrong byte, naming it.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = { 8, 4096, 65536, 1 << 20, 4 << 20 };
enum { ROUNDS = 5 };

static int rank, nranks;

static void fail(const char *what, size_t size, int round, size_t at,
		 unsigned long long got, unsigned long long want)
{
	fprintf(stderr, "rank %d: %s size %zu round %d: element %zu is %llu, want %llu\n",
		rank, what, size, round, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static uint64_t element(int r, size_t i, int round)
{
	return (uint64_t)(r + 1) * 1000003u + i * 7919u + (uint64_t)round * 104729u;
}

static void allreduce(size_t bytes)
{
	size_t n = bytes / sizeof(uint64_t);
	uint64_t *in = malloc(bytes), *out = malloc(bytes);

	for (int round = 0; round < ROUNDS; round++) {
		for (size_t i = 0; i < n; i++)
			in[i] = element(rank, i, round);
		memset(out, 0xa5, bytes);
		MPI_Allreduce(in, out, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
		for (size_t i = 0; i < n; i++) {
			uint64_t want = 0;

			for (int r = 0; r < nranks; r++)
				want += element(r, i, round);
			if (out[i] != want)
				fail("allreduce", bytes, round, i, out[i], want);
		}
	}
	free(in);
	free(out);
}

static void ring(size_t bytes)
{
	int to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
	unsigned char *out = malloc(bytes), *in = malloc(bytes);

	for (int round = 0; round < ROUNDS; round++) {
		for (size_t i = 0; i < bytes; i++)
			out[i] = (unsigned char)element(rank, i, round);
		memset(in, 0x5a, bytes);
		MPI_Sendrecv(out, (int)bytes, MPI_BYTE, to, round,
			     in, (int)bytes, MPI_BYTE, from, round,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (size_t i = 0; i < bytes; i++) {
			unsigned char want = (unsigned char)element(from, i, round);

			if (in[i] != want)
				fail("ring", bytes, round, i, in[i], want);
		}
	}
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		allreduce(sizes[s]);
		ring(sizes[s]);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("ranks %d size %zu: allreduce and ring verified\n", nranks, sizes[s]);
	}
	MPI_Finalize();
	return 0;
}
