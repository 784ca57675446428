import { useState, type FormEvent } from 'react';
import { api, envelope, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { CheckboxGroup, ConfirmButton, CopyButton, Empty, ErrorNote, Loading, Table, useAction, useLoad } from '../ui';

type Scope = components['schemas']['CreateKeyDto']['scopes'] extends (infer S)[] | undefined ? S : never;
const SCOPES: Scope[] = ['renders:read', 'renders:write', 'templates:read', 'templates:write', 'assets:read', 'assets:write', 'webhooks:read', 'webhooks:write', 'integrations:read', 'integrations:write'];

export function KeysPage() {
  const list = useLoad(() => unwrap(api.GET('/organization/api-keys')), []);
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([...SCOPES]);
  const [ips, setIps] = useState('');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<{ key: string; hint: string }>();
  const create = useAction();
  const revoke = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run(async () => {
      const key = await unwrap(
        api.POST('/organization/api-keys', {
          body: {
            mode,
            scopes,
            ...(name ? { name } : {}),
            ...(ips.trim() ? { ipAllowlist: ips.split(/[\s,]+/).filter(Boolean) } : {}),
            ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
          },
        }),
      );
      setCreated(key);
      setName('');
      list.reload();
    });
  };

  return (
    <section>
      <h1>API keys</h1>
      {created && (
        <div className="notice" role="status">
          <p>
            Your new key, shown <strong>once</strong>: copy it now.
          </p>
          <p>
            <code className="wrap" data-testid="new-key">
              {created.key}
            </code>{' '}
            <CopyButton text={created.key} />
          </p>
          <button type="button" className="link" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <details>
        <summary>Create a key</summary>
        <form className="stack" onSubmit={submit}>
          <fieldset>
            <legend>Mode</legend>
            <label>
              <input type="radio" name="mode" checked={mode === 'live'} onChange={() => setMode('live')} /> live (uses credits)
            </label>
            <label>
              <input type="radio" name="mode" checked={mode === 'test'} onChange={() => setMode('test')} /> test (free, watermarked)
            </label>
          </fieldset>
          <label>
            Name
            <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
          </label>
          <CheckboxGroup legend="Scopes" options={SCOPES} selected={scopes} onChange={setScopes} />
          <label>
            IP allowlist (addresses or CIDR blocks, comma-separated; empty: any)
            <input value={ips} onChange={(e) => setIps(e.target.value)} placeholder="203.0.113.0/24" />
          </label>
          <label>
            Expires
            <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={create.busy}>
            Create key
          </button>
          <ErrorNote error={create.error} />
        </form>
      </details>
      <ErrorNote error={list.error ?? revoke.error} />
      {list.loading && !list.data ? (
        <Loading what="Loading keys" />
      ) : list.data?.length === 0 ? (
        <Empty>No keys yet.</Empty>
      ) : (
        <Table columns={['Key', 'Mode', 'Scopes', 'Expires', 'State']}>
          {list.data?.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td>
                <code>{k.hint}</code> {k.name}
              </td>
              <td>{k.mode}</td>
              <td>{k.scopes.length === SCOPES.length ? 'all' : k.scopes.join(', ')}</td>
              <td>{k.expiresAt ? new Date(k.expiresAt).toLocaleString() : 'never'}</td>
              <td>
                {k.revokedAt ? (
                  <span className="badge s-revoked">revoked</span>
                ) : (
                  <ConfirmButton
                    label={`Revoke ${k.hint}`}
                    question={`Revoke the ${k.mode} key ${k.hint}${k.name ? ` (${k.name})` : ''}? Applications using it stop working at once; this cannot be undone.`}
                    busy={revoke.busy}
                    onConfirm={() => void revoke.run(async () => (await envelope(api.DELETE('/organization/api-keys/{id}', { params: { path: { id: k.id } } })), list.reload()))}
                  >
                    Revoke
                  </ConfirmButton>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
