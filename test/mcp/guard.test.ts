// The HTTP guards on POST / and the routes around it, in the spec's order (first failure wins).
import { describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES } from "../../src/mcp/guard.ts";
import { createApp } from "../../src/mcp/server.ts";
import { makeKernel } from "../helpers/kernel.ts";
import { makeApp, TOKEN } from "./rpc.ts";

const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

async function expectPlain(res: Response, status: number, mentions?: RegExp): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toStartWith("text/plain");
  const body = await res.text();
  expect(body.length).toBeGreaterThan(0);
  expect(() => JSON.parse(body)).toThrow();
  if (mentions) expect(body).toMatch(mentions);
  return body;
}

async function expectPong(res: Response): Promise<void> {
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
}

describe("routes", () => {
  test("answers 404 on any path other than / and /healthz", async () => {
    const a = await makeApp();
    await expectPlain(await a.send({ path: "/mcp", body: PING }), 404);
    await expectPlain(await a.send({ path: "/healthz/x", method: "GET" }), 404);
    await expectPlain(await a.send({ path: "/index.html", method: "GET" }), 404);
  });

  test("answers 405 to a method other than POST on /", async () => {
    const a = await makeApp();
    for (const method of ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      const res = await a.send({ method, body: method === "GET" ? null : PING });
      await expectPlain(res, 405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  test("the 404 comes before the 405 and the Host check", async () => {
    const a = await makeApp();
    await expectPlain(await a.send({ path: "/nope", method: "GET", headers: { host: "evil.com" } }), 404);
    await expectPlain(await a.send({ method: "GET", headers: { host: "evil.com" } }), 405);
  });

  test("GET /healthz answers 200 ok in plain text without auth", async () => {
    const a = await makeApp();
    const res = await a.send({ path: "/healthz", method: "GET", headers: { authorization: null, "content-type": null } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(await res.text()).toBe("ok");
  });

  test("GET /healthz still refuses a foreign Host with 403", async () => {
    const a = await makeApp();
    await expectPlain(await a.send({ path: "/healthz", method: "GET", headers: { host: "evil.com" } }), 403, /Host/);
    await expectPlain(await a.send({ path: "/healthz", method: "GET", headers: { host: null } }), 403);
  });
});

describe("Host", () => {
  test("refuses a missing Host with 403", async () => {
    await expectPlain(await (await makeApp()).send({ body: PING, headers: { host: null } }), 403, /Host/);
  });

  for (const host of ["evil.com", "localhost.evil.com", "evil.com:27183", "127.0.0.1.nip.io", "10.0.0.1:27183", "0.0.0.0:27183", "[::2]:27183"]) {
    test(`refuses Host ${host} with 403`, async () => {
      await expectPlain(await (await makeApp()).send({ body: PING, headers: { host } }), 403, /Host/);
    });
  }

  for (const host of ["localhost", "localhost:27183", "127.0.0.1", "127.0.0.1:1", "[::1]", "[::1]:8080", "LOCALHOST:9"]) {
    test(`accepts Host ${host}`, async () => {
      await expectPong(await (await makeApp()).send({ body: PING, headers: { host } }));
    });
  }
});

test("the Host answers stay right past the names kept between requests (many Host values, then the first again)", async () => {
  const a = await makeApp();
  for (let i = 0; i < 150; i++) {
    const host = i % 2 === 0 ? `localhost:${1000 + i}` : `evil${i}.com:${1000 + i}`;
    expect((await a.send({ body: PING, headers: { host } })).status).toBe(i % 2 === 0 ? 200 : 403);
  }
  expect((await a.send({ body: PING, headers: { host: "evil1.com:1001" } })).status).toBe(403);
  await expectPong(await a.send({ body: PING, headers: { host: "localhost:1000" } }));
});

describe("Origin", () => {
  for (const origin of ["http://evil.com", "null", "https://localhost.evil.com", "http://127.0.0.1.evil.com:80", "file://", "not a url"]) {
    test(`refuses Origin ${JSON.stringify(origin)} with 403`, async () => {
      await expectPlain(await (await makeApp()).send({ body: PING, headers: { origin } }), 403, /origin/i);
    });
  }

  for (const origin of ["http://localhost:3000", "http://127.0.0.1", "http://[::1]:8080", "https://localhost"]) {
    test(`accepts the loopback Origin ${origin}`, async () => {
      await expectPong(await (await makeApp()).send({ body: PING, headers: { origin } }));
    });
  }

  test("a request without Origin is accepted (curl, agents)", async () => {
    await expectPong(await (await makeApp()).send({ body: PING, headers: { origin: null } }));
  });
});

describe("Content-Type", () => {
  for (const ct of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "json"]) {
    test(`refuses Content-Type ${ct} with 415`, async () => {
      await expectPlain(await (await makeApp()).send({ body: PING, headers: { "content-type": ct } }), 415, /application\/json/);
    });
  }

  test("refuses a missing Content-Type with 415", async () => {
    // A string body makes the Request add text/plain; an ArrayBuffer body adds nothing.
    const res = await (await makeApp()).send({ body: new TextEncoder().encode(PING).buffer as ArrayBuffer, headers: { "content-type": null } });
    await expectPlain(res, 415);
  });

  for (const ct of ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]) {
    test(`accepts Content-Type ${ct}`, async () => {
      await expectPong(await (await makeApp()).send({ body: PING, headers: { "content-type": ct } }));
    });
  }
});

describe("bearer token", () => {
  const refused: [string, string | null][] = [
    ["missing", null],
    ["wrong", "Bearer nope"],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, 2)}`],
    ["the token plus more", `Bearer ${TOKEN}x`],
    ["Basic", `Basic ${btoa(`user:${TOKEN}`)}`],
    ["the bare token", TOKEN],
    ["an empty Bearer", "Bearer "],
  ];
  for (const [what, authorization] of refused) {
    test(`refuses ${what} Authorization with 401`, async () => {
      const res = await (await makeApp()).send({ body: PING, headers: { authorization } });
      await expectPlain(res, 401, /Bearer/);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    });
  }

  test("accepts the correct bearer token, with any case of the scheme", async () => {
    const a = await makeApp();
    await expectPong(await a.send({ body: PING, headers: { authorization: `Bearer ${TOKEN}` } }));
    await expectPong(await a.send({ body: PING, headers: { authorization: `bearer ${TOKEN}` } }));
  });

  test("two daemons' tokens in one process: each accepts its own and refuses the other's, in any order", async () => {
    // The expected token's digest is kept between requests: it must follow the token asked about.
    const other = `${TOKEN.slice(1)}z`;
    const a = await makeApp();
    const b = await makeApp({ token: other });
    for (let i = 0; i < 3; i++) {
      await expectPong(await a.send({ body: PING, headers: { authorization: `Bearer ${TOKEN}` } }));
      expect((await b.send({ body: PING, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
      await expectPong(await b.send({ body: PING, headers: { authorization: `Bearer ${other}` } }));
      expect((await a.send({ body: PING, headers: { authorization: `Bearer ${other}` } })).status).toBe(401);
    }
  });

  test("with no token configured, no Authorization is needed", async () => {
    const a = await makeApp({ noToken: true });
    await expectPong(await a.send({ body: PING, headers: { authorization: null } }));
    await expectPong(await a.send({ body: PING, headers: { authorization: "Bearer anything" } }));
  });

  test("a refused call changes nothing", async () => {
    const a = await makeApp();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "increment_counter", arguments: { name: "c" } } });
    expect((await a.send({ body, headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await a.send({ body, headers: { host: "evil.com" } })).status).toBe(403);
    expect(await a.call("increment_counter", { name: "c" })).toEqual({ value: 1 });
  });
});

describe("body size", () => {
  const bigPing = (size: number) => {
    const base = { jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "" } };
    const pad = size - JSON.stringify(base).length;
    return JSON.stringify({ ...base, params: { pad: "x".repeat(pad) } });
  };

  test("accepts a body of exactly 1 MiB", async () => {
    const body = bigPing(MAX_BODY_BYTES);
    expect(body.length).toBe(MAX_BODY_BYTES);
    await expectPong(await (await makeApp()).send({ body }));
  });

  test("refuses a body over 1 MiB with 413, by its actual size", async () => {
    const body = bigPing(MAX_BODY_BYTES + 1);
    await expectPlain(await (await makeApp()).send({ body }), 413, /1 MiB/);
  });

  test("refuses a body over 1 MiB with 413 even when Content-Length understates it", async () => {
    const body = bigPing(MAX_BODY_BYTES + 10);
    await expectPlain(await (await makeApp()).send({ body, headers: { "content-length": "100" } }), 413);
  });

  test("refuses a streamed body over 1 MiB with 413", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > MAX_BODY_BYTES) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    await expectPlain(await (await makeApp()).send({ body: stream }), 413);
  });

  test("refuses a declared Content-Length over 1 MiB with 413 before reading", async () => {
    await expectPlain(await (await makeApp()).send({ body: PING, headers: { "content-length": String(MAX_BODY_BYTES + 1) } }), 413);
  });
});

describe("guard order: the first failure wins", () => {
  const huge = "x".repeat(MAX_BODY_BYTES + 1);
  const cases: [string, Record<string, string | null>, string, number][] = [
    ["bad Host and bad content type → 403", { host: "evil.com", "content-type": "text/plain" }, PING, 403],
    ["bad Host and no auth → 403", { host: "evil.com", authorization: null }, PING, 403],
    ["bad Host and foreign Origin, and everything else wrong → 403 for Host", { host: "evil.com", origin: "http://evil.com", "content-type": "text/plain", authorization: null }, huge, 403],
    ["foreign Origin and bad content type → 403", { origin: "http://evil.com", "content-type": "text/plain" }, PING, 403],
    ["foreign Origin and no auth → 403", { origin: "null", authorization: null }, PING, 403],
    ["bad content type and no auth → 415", { "content-type": "text/plain", authorization: null }, PING, 415],
    ["bad content type and huge body → 415", { "content-type": "text/plain" }, huge, 415],
    ["no auth and huge body → 401", { authorization: null }, huge, 401],
    ["wrong auth and huge body → 401", { authorization: "Bearer x" }, huge, 401],
  ];
  for (const [name, headers, body, status] of cases) {
    test(name, async () => {
      await expectPlain(await (await makeApp()).send({ headers, body }), status);
    });
  }

  test("the Host check precedes the Origin check (its message names Host)", async () => {
    const body = await expectPlain(await (await makeApp()).send({ body: PING, headers: { host: "evil.com", origin: "http://evil.com" } }), 403);
    expect(body).toMatch(/Host/);
    const body2 = await expectPlain(await (await makeApp()).send({ body: PING, headers: { origin: "http://evil.com" } }), 403);
    expect(body2).not.toMatch(/Host must/);
  });
});

describe("an explicit --host beyond loopback", () => {
  const ping = (app: ReturnType<typeof createApp>, host: string) =>
    app.fetch(new Request("http://x/", { method: "POST", headers: { host, "content-type": "application/json", authorization: `Bearer ${TOKEN}` }, body: PING }));

  test("the bound address is accepted as Host and Origin, other hosts still are not", async () => {
    const { kernel } = await makeKernel();
    const app = createApp({ kernel, token: TOKEN, extraHosts: ["192.168.1.5"] });
    expect((await ping(app, "192.168.1.5:27183")).status).toBe(200);
    expect((await ping(app, "127.0.0.1:27183")).status).toBe(200);
    expect((await ping(app, "192.168.1.6:27183")).status).toBe(403);
  });

  test("a bound IPv6 address is accepted in its bracketed Host form", async () => {
    const { kernel } = await makeKernel();
    const app = createApp({ kernel, token: TOKEN, extraHosts: ["fd00::1"] });
    expect((await ping(app, "[fd00::1]:27183")).status).toBe(200);
    expect((await ping(app, "[fd00::2]:27183")).status).toBe(403);
  });
});

describe("/healthz methods", () => {
  test("HEAD /healthz answers 200", async () => {
    const res = await (await makeApp()).send({ path: "/healthz", method: "HEAD" });
    expect(res.status).toBe(200);
  });

  test("POST /healthz answers 405", async () => {
    await expectPlain(await (await makeApp()).send({ path: "/healthz", body: PING }), 405);
  });
});
