/* core/main.c - the rezuscloud executable; everything else lives in the core library. */
#include <config.h>

#include "core/daemon.h"

extern char **environ;

int main(int argc, char **argv)
{
	return rz_daemon_main(argc, argv, environ);
}
