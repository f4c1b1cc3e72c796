# Runs a command in a pseudo-terminal, as a user's terminal would: the command's screen output is
# copied to our stdout, our stdin is typed into it. Used by test/helpers/pty-session.ts to drive an
# interactive client (Claude Code's TUI) from a test. The child leads its own session (pty.fork),
# so its process group id is printed on stderr first ("pgid N"): the test kills that group too.
# End of our stdin closes the session: SIGHUP and SIGTERM to the child's group, as a closed
# terminal window does. Exits with the child's exit code.
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios

ROWS, COLS = 50, 160


def main() -> int:
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    sys.stderr.write(f"pgid {pid}\n")
    sys.stderr.flush()
    stdin_open = True
    while True:
        watched = [fd] + ([0] if stdin_open else [])
        ready, _, _ = select.select(watched, [], [], 0.5)
        if fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            os.write(1, data)
        if 0 in ready:
            data = os.read(0, 65536)
            if data:
                os.write(fd, data)
            else:
                stdin_open = False
                for sig in (signal.SIGHUP, signal.SIGTERM):
                    try:
                        os.killpg(pid, sig)
                    except ProcessLookupError:
                        pass
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
