// The store's URL: which strings name a PostgreSQL store, what TLS it gets by default, and how
// it is shown (never with its password).
//
// TLS comes with the URL: Bun's client reads `sslmode` (disable, prefer, require, verify-ca,
// verify-full) and `sslrootcert` (the CA file, its `tls.caFile`) from the query string, so
// `postgres://u:p@db.example:5432/airlock?sslmode=verify-full&sslrootcert=/etc/airlock/ca.pem`
// needs nothing here. Checked with Bun 1.4.5 against PostgreSQL 15 with ssl=on and a private CA:
// verify-full connects when the host matches the certificate and refuses when it does not or
// the CA differs, and sslmode=require refuses a server without TLS.
import { AirlockError } from "../../errors.ts";

export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

/**
 * The URL as Bun's client should get it. Without `sslmode` Bun uses no TLS at all, where libpq
 * (and so every other PostgreSQL tool) prefers it: `prefer` is added, so a server that offers
 * TLS gets it. And a certificate check asked for must happen: NODE_TLS_REJECT_UNAUTHORIZED=0
 * would silently turn it off in Bun, so such a start is refused.
 */
export function withTlsDefaults(url: string, shown = redactUrl(url)): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url; // Bun's own message about it is clearer than a guess here
  }
  const mode = u.searchParams.get("sslmode");
  if (mode === null) {
    u.searchParams.set("sslmode", "prefer");
    return u.toString();
  }
  if (/^verify-(ca|full)$/i.test(mode) && process.env.NODE_TLS_REJECT_UNAUTHORIZED === "0") {
    throw new AirlockError("config", `cannot open store ${shown}: sslmode=${mode} asks for a certificate check, and NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment would turn it off; unset it`);
  }
  return url;
}

/** The URL with its password (in the userinfo or the query string) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    // Bun also takes the password (and the client key's) from the query string.
    u.search = u.search.replace(/([?&](?:ssl)?password=)[^&]*/gi, "$1***");
    return u.toString();
  } catch {
    // Not a URL the parser takes: hide everything between the user's name and the host.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@]*@/i, "$1:***@");
  }
}
