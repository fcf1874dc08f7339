"""The privileged FPGA programming: ``[agent] fpga_program_command``.

``run_program_command`` runs ``<command> <PCI address> <bitstream>``
in its own session, kills the whole session after ``timeout`` seconds
(the tool's helpers too), and returns the exit status (None on timeout)
and the end of its standard error.

In a daemon, the command and the timeout must be the daemon's own
``[agent] fpga_program_command`` and ``fpga_program_timeout``, and the
bitstream a file named by a bitstream id directly in its ``[agent]
bitstream_dir``: the agent cannot make root run anything else.
Anything else raises ``RefusedAction``.
"""

import os
import shlex
import signal
import subprocess

from cyborg_lite.agent import names
from cyborg_lite import privsep
from cyborg_lite import profiles

# The end of the tool's standard error that is kept for the message.
STDERR_TAIL = 2000


def _refuse(why):
    raise privsep.RefusedAction('refused to program: %s' % why)


def check_request(command: str, address: str, bitstream_path: str,
                  timeout: float, settings) -> None:
    """``RefusedAction`` unless the call is what ``settings`` (the
    daemon's ``[agent]`` options, None in process) allow."""
    if not command:
        _refuse('[agent] fpga_program_command is not set')
    if not names.PCI_ADDRESS_RE.match(address):
        _refuse('%r is not a PCI address' % (address,))
    if settings is None:
        return
    if command != settings.fpga_program_command:
        _refuse("the command is not the daemon's [agent] "
                "fpga_program_command")
    if timeout != settings.fpga_program_timeout:
        _refuse('the timeout is not [agent] fpga_program_timeout')
    directory, name = os.path.split(bitstream_path)
    if os.path.realpath(directory) != os.path.realpath(
            settings.bitstream_dir) or \
            not profiles.BITSTREAM_ID_RE.fullmatch(name):
        _refuse('%s is not a bitstream of [agent] bitstream_dir'
                % bitstream_path)


@privsep.fpga_admin.entrypoint
def run_program_command(command: str, address: str, bitstream_path: str,
                        timeout: float) -> tuple[int | None, str]:
    """Exit status (None on timeout) and standard error of the
    programming of ``address`` with ``bitstream_path``."""
    settings = None if privsep.in_process() else privsep.daemon_settings()
    check_request(command, address, bitstream_path, timeout, settings)
    argv = shlex.split(command) + [address, bitstream_path]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            errors='replace', start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, ''
    return proc.returncode, stderr[-STDERR_TAIL:]
