"""Worker "hosts" for the partition tests: Linux network namespaces, each joined to this
host by a veth pair on a /24 of its own (10.2xx.N.0/24, this host .1, the namespace .2).

Cutting a host sets this side of its veth down: packets stop both ways, TCP connections
stay open and retransmit, exactly a network partition. Healing sets it up again. Nothing
here touches an interface or address it did not create; everything is removed on exit.
Needs root and iproute2 (``apt-get install iproute2``; ``make test`` installs it as root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def unavailable() -> str | None:
    """Why namespaces cannot be made here, or None."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` not found: apt-get install iproute2 (`make test` installs it as root)"
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add); run the topology tests as root"
    probe = f"citeq-probe-{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace here: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


@dataclass
class Host:
    """One namespace and its link."""

    index: int
    netns: str
    host_if: str
    ns_if: str
    host_addr: str
    ns_addr: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]

    def cut(self) -> None:
        _ip("link", "set", self.host_if, "down")

    def heal(self) -> None:
        _ip("link", "set", self.host_if, "up")


class Hosts:
    """``count`` namespaced hosts, made on enter and removed on exit."""

    def __init__(self, count: int) -> None:
        tag = os.getpid() % 100_000
        self.subnet = 200 + os.getpid() % 50
        self.hosts = [Host(i, f"citeq-{tag}-{i}", f"cq{tag}h{i}", f"cq{tag}n{i}",
                           f"10.{self.subnet}.{i}.1", f"10.{self.subnet}.{i}.2") for i in range(1, count + 1)]

    def __enter__(self) -> list[Host]:
        try:
            for h in self.hosts:
                _ip("netns", "add", h.netns)
                _ip("link", "add", h.host_if, "type", "veth", "peer", "name", h.ns_if)
                _ip("link", "set", h.ns_if, "netns", h.netns)
                _ip("addr", "add", f"{h.host_addr}/24", "dev", h.host_if)
                _ip("link", "set", h.host_if, "up")
                _ip("-n", h.netns, "addr", "add", f"{h.ns_addr}/24", "dev", h.ns_if)
                _ip("-n", h.netns, "link", "set", h.ns_if, "up")
                _ip("-n", h.netns, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self.hosts

    def __exit__(self, *exc) -> None:
        for h in self.hosts:
            _ip("link", "del", h.host_if, check=False)  # removes both ends of the pair
            _ip("netns", "del", h.netns, check=False)
