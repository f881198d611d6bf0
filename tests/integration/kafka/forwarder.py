"""A TCP forwarder that stands in for a broker's network presence, so a test can "kill the broker" (kill
this process: connections reset, new ones refused) and bring it back with its data (start it again), which
an in-memory broker cannot do itself.

Run: ``python forwarder.py LISTEN_PORT TARGET_PORT`` (both on 127.0.0.1); prints ``ready`` once listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def main(listen: int, target: int) -> None:
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(_pipe(client_reader, upstream_writer), _pipe(upstream_reader, client_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", listen, reuse_address=True)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
