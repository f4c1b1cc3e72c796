// Capabilities (lock, lease, wake tokens) are 128 random bits: unguessable, so holding one
// is the proof of ownership.
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Buffer.from(bytes).toString("hex");
}
