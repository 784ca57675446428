import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { Metrics } from '#libs/core';

// Issue 30: the Grafana dashboard and the alert rules in deploy/monitoring are built on exactly the
// metrics the API and the workers expose: every series they name exists (a renamed metric fails here).

const ROOT = join(import.meta.dirname, '..');
const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/monitoring/grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
const alerts = load(readFileSync(join(ROOT, 'deploy/monitoring/alerts.yaml'), 'utf8')) as { groups: { rules: { alert: string; expr: string; labels: Record<string, string>; annotations: Record<string, string> }[] }[] };

/** The series a PromQL expression names (our prefix), histograms' _bucket/_sum/_count as their metric. */
const named = (expr: string) => [...expr.matchAll(/\bmr_[a-z0-9_]+/g)].map(([n]) => n.replace(/_(bucket|sum|count)$/, ''));

describe('deploy/monitoring (issue 30)', () => {
  const exposed = new Set(new Metrics('api').registry.getMetricsAsArray().map((m) => m.name));

  it('the dashboard\'s panels query only exposed metrics, and show throughput, queue depth, p50/p95, failure rate and outbox lag', () => {
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const unknown = exprs.flatMap(named).filter((n) => !exposed.has(n));
    expect(unknown).toEqual([]);
    const all = exprs.join('\n');
    for (const needed of ['rate(mr_renders_total', 'mr_queue_jobs', 'histogram_quantile(0.5', 'histogram_quantile(0.95', 'outcome="failed"', 'mr_outbox_lag_seconds']) expect([needed, all.includes(needed)]).toEqual([needed, true]);
  });

  it('the alert rules: queue growing for 10 minutes, outbox lag over a minute, failure rate over 5 %, worker restarts; only exposed metrics', () => {
    const rules = alerts.groups.flatMap((g) => g.rules);
    expect(rules.flatMap((r) => named(r.expr)).filter((n) => !exposed.has(n))).toEqual([]);
    const by = Object.fromEntries(rules.map((r) => [r.alert, r]));
    expect(by.RenderQueueGrowing?.expr).toMatch(/mr_queue_jobs\{state="waiting"\}\[10m\]/);
    expect(by.OutboxLagging?.expr).toMatch(/mr_outbox_lag_seconds\) > 60$/);
    expect(by.RenderFailureRate?.expr).toMatch(/> 0\.05/);
    expect(by.WorkerRestarting?.expr).toMatch(/mr_process_start_time_seconds\{process="worker"\}/);
    for (const r of rules) expect([r.alert, typeof r.labels.severity, typeof r.annotations.summary]).toEqual([r.alert, 'string', 'string']);
  });
});
