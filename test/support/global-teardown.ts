export default async function globalTeardown(): Promise<void> {
  const pid = Number(process.env.TOKENGATE_TEST_REDIS_PID);
  if (pid) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
