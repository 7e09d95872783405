// Placeholder replaced below once the proto carries client refusals.
export async function reportRefusal(_o: { socketPath: string; key: Buffer; resolver: unknown; code: string; detail: string }): Promise<void> {
  return;
}
