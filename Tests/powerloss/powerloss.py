"""What both power-loss tests share: powerlossfs mounted in a fresh work directory, and the
command that loses power."""
import os, subprocess, sys, tempfile, time


class PowerLossFS:
    """powerlossfs mounted at `<work>/mnt`, in the foreground of a child process."""

    def __init__(self, binary, prefix):
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.mount = os.path.join(self.work, "mnt")
        os.mkdir(self.mount)
        self.process = subprocess.Popen([binary, self.mount, "-f", "-s"], stdout=subprocess.DEVNULL,
                                        stderr=open(os.path.join(self.work, "fs.log"), "w"))
        for _ in range(200):  # bounded: 10 s
            if os.path.ismount(self.mount):
                return
            time.sleep(0.05)
        self.process.kill()
        sys.exit("powerlossfs did not mount")

    def lose_power(self):
        """Everything not fsynced is gone, as after a crash of the machine."""
        try:
            open(os.path.join(self.mount, ".powerloss"), "w")
        except OSError as error:
            assert error.errno == 125, error  # ECANCELED: it happened
        else:
            sys.exit("powerlossfs did not lose power")

    def unmount(self):
        subprocess.run(["fusermount3", "-u", self.mount])
        self.process.wait(timeout=10)
