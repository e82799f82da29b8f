/**
 * The sum of a metric's samples over all its labels, scraped from a service's admin port (`/metrics`); 0 while it
 * has none. For tests that allow what the service counted, e.g. late wakes (tokengate_limiter_late_wakes_total):
 * a caller that woke past its slot keeps the slot used and queues again, by design (issue 41).
 */
export async function metricTotal(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}
