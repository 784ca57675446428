import { Migration } from '@mikro-orm/migrations';

export class Migration20261122023443 extends Migration {

  override name = 'Migration20261122023443';

  override up(): void | Promise<void> {
    this.addSql(`create table \`credit_balance\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`kind\` text not null, \`granted\` integer not null, \`grant_used\` integer not null, \`topup\` integer not null, \`held\` integer not null, \`low_notified\` integer not null, \`period_start\` datetime not null, \`period_end\` datetime not null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`credit_balance_workspace_id_kind_unique\` on \`credit_balance\` (\`workspace_id\`, \`kind\`);`);

    this.addSql(`create table \`credit_ledger\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`kind\` text not null, \`reason\` text not null, \`amount\` integer not null, \`credits\` integer not null, \`render_id\` text null, \`phase\` text null, \`balance_after\` integer not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`credit_ledger_workspace_id_id_index\` on \`credit_ledger\` (\`workspace_id\`, \`id\`);`);
    this.addSql(`create unique index \`credit_ledger_render_id_kind_phase_unique\` on \`credit_ledger\` (\`render_id\`, \`kind\`, \`phase\`);`);

    this.addSql(`create table \`outbox_event\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`type\` text not null, \`data\` json not null, \`created_at\` datetime not null, \`dispatched_at\` datetime null);`);
    this.addSql(`create index \`outbox_event_workspace_id_index\` on \`outbox_event\` (\`workspace_id\`);`);
    this.addSql(`create index \`outbox_event_dispatched_at_index\` on \`outbox_event\` (\`dispatched_at\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`credit_balance\`;`);
    this.addSql(`drop table if exists \`credit_ledger\`;`);
    this.addSql(`drop table if exists \`outbox_event\`;`);
  }

}
