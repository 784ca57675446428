import { useEffect, useRef } from 'react';
import { api, envelope, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { usePollWhile, useRenderFeed } from '../live';
import { credits, Empty, ErrorNote, Loading, Table, useLoad } from '../ui';

type LedgerReason = components['schemas']['LedgerEntryDto']['reason'];

/** A ledger line's reason in words. */
const REASONS: Record<LedgerReason, string> = {
  grant: 'plan grant',
  topup: 'top-up',
  hold: 'held for a running render',
  capture: 'render done: hold spent',
  release: 'hold released (render failed or cancelled)',
  refund: 'refund',
  adjustment: 'adjustment',
};

export function CreditsPage() {
  const balance = useLoad(() => unwrap(api.GET('/credits')), []);
  const ledger = useLoad(() => envelope(api.GET('/credits/history', { params: { query: { limit: 100 } } })), []);
  const b = balance.data;
  // Live (issue 29): a render queued, settled or cancelled moves credits (a hold taken, spent or
  // released), so each render event reloads the balance and the ledger (debounced); while the feed
  // is down, they are polled as long as something is held.
  const debounce = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(debounce.current), []);
  const reload = () => {
    balance.reload();
    ledger.reload();
  };
  const up = useRenderFeed((m) => {
    if (m.type === 'render.progress') return;
    clearTimeout(debounce.current);
    debounce.current = setTimeout(reload, 250);
  });
  usePollWhile(!up && !!b && (b.credits.image.held > 0 || b.credits.video.held > 0), reload);
  return (
    <section>
      <h1>Credits</h1>
      <ErrorNote error={balance.error} />
      {!b ? (
        !balance.error && <Loading what="Loading the balance" />
      ) : (
        <>
          <p className="muted">
            Plan {b.planCode} · the grant renews {new Date(b.periodEnd).toLocaleDateString()}
          </p>
          <div className="cards">
            {(['image', 'video'] as const).map((kind) => {
              const k = b.credits[kind];
              return (
                <div key={kind} className="card balance" data-kind={kind}>
                  <h2>{kind}</h2>
                  <p className="big">{k.available}</p>
                  <p className="muted">available</p>
                  <dl className="facts">
                    <dt>Held by running renders</dt>
                    <dd>{k.held}</dd>
                    <dt>Granted this period</dt>
                    <dd>{k.granted}</dd>
                    <dt>Used this period</dt>
                    <dd>{k.used}</dd>
                    <dt>Top-up</dt>
                    <dd>{k.topup}</dd>
                  </dl>
                </div>
              );
            })}
          </div>
        </>
      )}
      <h2>Ledger</h2>
      <ErrorNote error={ledger.error} />
      {!ledger.data ? (
        !ledger.error && <Loading what="Loading the ledger" />
      ) : ledger.data.data.length === 0 ? (
        <Empty>No credit movements yet.</Empty>
      ) : (
        <Table columns={['When', 'Kind', 'Reason', 'Change', 'Balance after', 'Render']}>
          {ledger.data.data.map((e) => (
            <tr key={e.id}>
              <td>{new Date(e.createdAt).toLocaleString()}</td>
              <td>{e.kind}</td>
              <td>{REASONS[e.reason]}</td>
              <td>{e.amount === 0 ? <span title="The credits were taken from available when the render started (its hold)">0 ({credits(e.credits)} spent from the hold)</span> : e.amount > 0 ? `+${e.amount}` : e.amount}</td>
              <td>{e.balanceAfter}</td>
              <td>{e.renderId ? <a href={`/renders/${e.renderId}`}>{e.renderId}</a> : ''}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
