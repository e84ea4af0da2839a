// SPDX-License-Identifier: MIT
/*
 * pthcaller: a target making a known number of the pthread calls
 * msprof's ltrace list names, for --host-sys=osrt's pthread probes (the
 * preloaded agent serves the protocol; this program never calls it).
 *
 *   pthcaller NODE N GO
 *
 * Opens NODE (a card: the agent then has a device), starts thread W,
 * prints "pthcaller: ready pid=<pid>" and polls every 10 ms for the file
 * GO. Once it exists, main makes N rounds of pthread_attr_init,
 * pthread_create (of a thread that returns at once), pthread_join; W makes
 * 2N pthread_mutex_init. Then it prints "pthcaller: done main=<tid>
 * w=<tid>" and waits for SIGTERM. So a window open before GO sees, on
 * main's thread, N pthread_attr_init, N pthread_create and N+1
 * pthread_join (W's too), and on W's 2N pthread_mutex_init.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long rounds;
static const char *go;
static volatile pid_t tid_w;

static void wait_go(void)
{
	struct timespec ms10 = { 0, 10000000 };

	while (access(go, F_OK))
		nanosleep(&ms10, NULL);
}

static void *nothing(void *arg)
{
	return arg;
}

static void *thread_w(void *arg)
{
	pthread_mutex_t m;

	(void)arg;
	tid_w = (pid_t)syscall(SYS_gettid);
	wait_go();
	for (long i = 0; i < 2 * rounds; i++)
		if (pthread_mutex_init(&m, NULL) || pthread_mutex_destroy(&m))
			exit(3);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w;
	sigset_t term;
	int sig;

	if (argc != 4 || (rounds = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: pthcaller NODE N GO\n");
		return 2;
	}
	go = argv[3];
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	if (open(argv[1], O_RDONLY | O_CLOEXEC) < 0) {
		perror("pthcaller: open");
		return 1;
	}
	if (pthread_create(&w, NULL, thread_w, NULL))
		return 1;
	printf("pthcaller: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	wait_go();
	for (long i = 0; i < rounds; i++) {
		pthread_attr_t a;
		pthread_t t;

		if (pthread_attr_init(&a) || pthread_create(&t, &a, nothing, NULL) ||
		    pthread_join(t, NULL) || pthread_attr_destroy(&a))
			return 3;
	}
	pthread_join(w, NULL);
	printf("pthcaller: done main=%d w=%d\n", (int)getpid(), (int)tid_w);
	fflush(stdout);
	sigwait(&term, &sig);
	return 0;
}
