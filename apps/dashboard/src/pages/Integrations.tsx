import { api, unwrap } from '../api/client';
import { Empty, ErrorNote, Loading, Status, useLoad } from '../ui';

export function IntegrationsPage() {
  const list = useLoad(() => unwrap(api.GET('/v1/integrations')), []);
  return (
    <section>
      <h1>Integrations</h1>
      <p className="muted">
        Connected accounts (spreadsheets, storage, voice, speech, messaging). Connect one with <code>npm run -s cli -- integration:connect</code>.
      </p>
      <ErrorNote error={list.error} />
      {!list.data ? (
        !list.error && <Loading what="Loading connections" />
      ) : list.data.length === 0 ? (
        <Empty>No account connected.</Empty>
      ) : (
        <ul className="list">
          {list.data.map((c) => (
            <li key={c.id}>
              <strong>{c.provider}</strong> <Status value={c.status} /> <span className="muted">since {new Date(c.connectedAt).toLocaleDateString()}</span>
              {c.reauthReason && <p className="muted">{c.reauthReason}</p>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
