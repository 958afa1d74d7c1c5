"""A benchmark stand-in for a deployed retrieval system: an asyncio HTTP/1.1 server with
keep-alive that answers every request with the same ten hits after ``--delay`` seconds.

``python -m benchmarks.system_server --delay 0.02`` prints its port on the first line and
serves until stdin closes.  It runs in its own process so its work is not charged to the
client being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

HITS = json.dumps({"hits": [{"doc_id": f"d{i}_0", "score": 10.0 - i} for i in range(10)]})
BODY = HITS.encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)


async def _serve(delay: float) -> None:
    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                if delay:
                    await asyncio.sleep(delay)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    asyncio.run(_serve(parser.parse_args().delay))


if __name__ == "__main__":
    main()
