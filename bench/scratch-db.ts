// A scratch database beside the given one (which is only connected to, never written): every bench run
// seeds a fresh, empty store, and drop() removes it after the run.
export async function scratchDatabase(url: string, prefix = 'assent_bench'): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: postgres } = await import('postgres');
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  return {
    url: scratch.toString(),
    async drop() {
      const again = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await again.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await again.end({ timeout: 5 });
      }
    },
  };
}
