import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { useMe } from '../auth';
import { age, ConfirmButton, Empty, ErrorNote, Loading, Table, useAction, useLoad } from '../ui';

type Member = components['schemas']['MemberDto'];
type Role = components['schemas']['InviteMemberDto']['role'] & string;
const ROLES: Role[] = ['member', 'owner'];

/**
 * The workspace's members (issue 29 "Run the team"): everyone sees who is in it; an owner invites a
 * member by phone (they sign in with a code as usual), changes a role, and removes a member, who
 * loses the workspace at their next request.
 */
export function TeamPage() {
  const { workspace } = useMe();
  const owner = workspace.role === 'owner';
  const list = useLoad(() => unwrap(api.GET('/organization/members')), [workspace.id]);
  const [phone, setPhone] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('member');
  const invite = useAction();
  const change = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void invite.run(async () => {
      await unwrap(api.POST('/organization/members', { body: { phone, role, ...(name.trim() ? { name: name.trim() } : {}) } }));
      setPhone('');
      setName('');
      list.reload();
    });
  };
  const setMemberRole = (m: Member, next: Role) =>
    void change.run(async () => (await unwrap(api.PATCH('/organization/members/{userId}', { params: { path: { userId: m.userId } }, body: { role: next } })), list.reload()));
  const remove = (m: Member) =>
    void change.run(async () => (await unwrap(api.DELETE('/organization/members/{userId}', { params: { path: { userId: m.userId } } })), list.reload()));
  const who = (m: Member) => m.name ?? m.phone;

  return (
    <section>
      <h1>Team</h1>
      {owner ? (
        <details>
          <summary>Invite a member</summary>
          <form className="stack" onSubmit={submit} aria-label="Invite a member">
            <label>
              Phone (international form)
              <input type="tel" required value={phone} maxLength={32} onChange={(e) => setPhone(e.target.value)} placeholder="+4915112345678" />
            </label>
            <label>
              Name
              <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />
            </label>
            <label>
              Role
              <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </label>
            <p className="muted">They sign in with a code sent to this number.</p>
            <button type="submit" className="primary" disabled={invite.busy}>
              Invite
            </button>
            <ErrorNote error={invite.error} />
          </form>
        </details>
      ) : (
        <p className="muted">Only an owner invites, changes or removes members.</p>
      )}
      <ErrorNote error={list.error ?? change.error} />
      {!list.data ? (
        !list.error && <Loading what="Loading members" />
      ) : list.data.length === 0 ? (
        <Empty>No members.</Empty>
      ) : (
        <Table columns={['Member', 'Phone', 'Role', 'Joined', '']}>
          {list.data.map((m) => (
            <tr key={m.userId} data-member={m.userId}>
              <td>{m.name ?? '—'}</td>
              <td>{m.phone}</td>
              <td>
                {owner ? (
                  <select aria-label={`Role of ${who(m)}`} value={m.role} disabled={change.busy} onChange={(e) => setMemberRole(m, e.target.value as Role)}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>{age(m.joinedAt)}</td>
              <td>
                {owner && (
                  <ConfirmButton label={`Remove ${who(m)}`} question={`Remove ${who(m)} from ${workspace.name}? They lose access at once.`} busy={change.busy} onConfirm={() => remove(m)}>
                    Remove
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
