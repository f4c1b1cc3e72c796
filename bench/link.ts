// A network link between the daemons and PostgreSQL, on loopback: a TCP proxy that holds every
// chunk, each way, for a fixed delay before it passes it on, in order. With it the benches see a
// round trip to the server as it is over a network (a managed database, another zone), which
// loopback's 40 µs hides: what a round trip saved is worth there (docs/cluster.md, "A link with
// a delay"). Used by `bun bench/cluster.ts --link-ms N`.
//
// The delay is per direction (a round trip costs twice it), in whole milliseconds: Bun's timers
// have a millisecond's resolution. The benches run it in a process of its own (spawnLink, or
// `bun bench/link.ts HOST PORT DELAY_MS`, which prints "port N" once it listens), so that its
// timers do not stretch with the bench's own load (its clients); its CPU shows in the machine's
// share, not in the bench's.
import type { Socket, TCPSocketListener } from "bun";

type End = {
  /** The other side of this connection, once connected. */
  peer: Socket<End> | null;
  /** Chunks for this socket not written yet (it pushed back). */
  out: Uint8Array[];
  /** A client's chunks for the server that came before the server side connected. */
  early: Uint8Array[];
  closed: boolean;
};

export interface Link {
  /** The URL with its host and port replaced by the proxy's. */
  via(url: string): string;
  close(): void;
}

/** A proxy to host:port on 127.0.0.1 with `delayMs` each way. */
export async function startLink(target: { host: string; port: number }, delayMs: number): Promise<Link> {
  if (!Number.isInteger(delayMs) || delayMs < 0) throw new Error(`--link-ms: ${delayMs} is not a whole number of milliseconds ≥ 0`);
  const sockets = new Set<Socket<End>>();

  const flush = (to: Socket<End>) => {
    const e = to.data;
    while (e.out.length > 0) {
      const chunk = e.out[0]!;
      const n = to.write(chunk);
      if (n < chunk.length) {
        e.out[0] = chunk.subarray(n); // the rest on drain
        return;
      }
      e.out.shift();
    }
    if (e.closed) to.end();
  };
  /** Passes a chunk from one side to its peer after the delay (copied: Bun reuses its buffer). */
  const pass = (from: Socket<End>, data: Uint8Array) => {
    const copy = new Uint8Array(data);
    const deliver = () => {
      const to = from.data.peer;
      if (!to) {
        from.data.early.push(copy); // the server side not connected yet: sent once it is
        return;
      }
      to.data.out.push(copy);
      flush(to);
    };
    if (delayMs === 0) deliver();
    else setTimeout(deliver, delayMs);
  };
  const closing = (s: Socket<End>) => {
    sockets.delete(s);
    const peer = s.data.peer;
    if (!peer) return;
    // After the delay too: what was in flight arrives first.
    setTimeout(() => {
      peer.data.closed = true;
      flush(peer);
    }, delayMs);
  };
  const handlers = {
    data: pass,
    drain: flush,
    close: closing,
    error: closing,
  };

  const server: TCPSocketListener<End> = Bun.listen<End>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      ...handlers,
      open(client) {
        client.data = { peer: null, out: [], early: [], closed: false };
        sockets.add(client);
        void Bun.connect<End>({ hostname: target.host, port: target.port, socket: handlers, data: { peer: client, out: [], early: [], closed: false } }).then(
          (upstream) => {
            sockets.add(upstream);
            client.data.peer = upstream;
            // What the client sent before the server side was up.
            upstream.data.out.push(...client.data.early);
            client.data.early = [];
            flush(upstream);
          },
          () => client.end(),
        );
      },
    },
  });
  return {
    via(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(server.port);
      return u.toString();
    },
    close() {
      server.stop(true);
      for (const s of sockets) s.end();
    },
  };
}

/** The same proxy in a child process of its own, stopped by close(). */
export async function spawnLink(target: { host: string; port: number }, delayMs: number): Promise<Link> {
  const child = Bun.spawn([process.execPath, import.meta.path, target.host, String(target.port), String(delayMs)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let said = "";
  for (;;) {
    const m = /^port (\d+)$/m.exec(said);
    if (m) {
      reader.releaseLock();
      const port = m[1]!;
      return {
        via(url) {
          const u = new URL(url);
          u.hostname = "127.0.0.1";
          u.port = port;
          return u.toString();
        },
        close() {
          child.kill();
        },
      };
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`the link process ended before it listened (exit ${await child.exited}): ${said}`);
    said += new TextDecoder().decode(value);
  }
}

if (import.meta.main) {
  const [host, port, delay] = process.argv.slice(2);
  if (!host || !port || delay === undefined) throw new Error("usage: bun bench/link.ts HOST PORT DELAY_MS");
  const link = await startLink({ host, port: Number(port) }, Number(delay));
  console.log(`port ${new URL(link.via("postgres://x@127.0.0.1:1/db")).port}`);
  // Ends with its parent: when the bench's pipe to it closes.
  void (async () => {
    for await (const _ of Bun.stdin.stream()) {
      // nothing is sent on it
    }
    link.close();
    process.exit(0);
  })();
}
