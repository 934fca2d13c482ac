# ptyrun.py ARGV...: run ARGV with a fresh pty as its controlling terminal
# and stdin (as a root shell would start it), then print its exit status
# and what was pushed into the terminal's input queue: what the shell
# would have read and run next.
import fcntl, os, pty, subprocess, sys, termios

master, slave = pty.openpty()


def own_tty():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, preexec_fn=own_tty)
p.wait(timeout=120)
fcntl.fcntl(slave, fcntl.F_SETFL, fcntl.fcntl(slave, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    queued = os.read(slave, 4096)
except BlockingIOError:
    queued = b''
print('rc=%d queued=%r' % (p.returncode, queued))
