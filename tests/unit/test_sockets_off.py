import socket

import pytest
from pytest_socket import SocketBlockedError


def test_unit_tests_cannot_open_sockets() -> None:
    with pytest.raises(SocketBlockedError):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
