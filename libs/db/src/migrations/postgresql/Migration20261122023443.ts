import { Migration } from '@mikro-orm/migrations';

export class Migration20261122023443 extends Migration {

  override name = 'Migration20261122023443';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_balance" ("id" varchar(40) not null, "workspace_id" varchar(32) not null, "kind" varchar(8) not null, "granted" int not null, "grant_used" int not null, "topup" int not null, "held" int not null, "low_notified" boolean not null, "period_start" timestamptz not null, "period_end" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "credit_balance" add constraint "credit_balance_workspace_id_kind_unique" unique ("workspace_id", "kind");`);

    this.addSql(`create table "credit_ledger" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "kind" varchar(8) not null, "reason" varchar(12) not null, "amount" int not null, "credits" int not null, "render_id" varchar(40) null, "phase" varchar(8) null, "balance_after" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "credit_ledger_workspace_id_id_index" on "credit_ledger" ("workspace_id", "id");`);
    this.addSql(`alter table "credit_ledger" add constraint "credit_ledger_render_id_kind_phase_unique" unique ("render_id", "kind", "phase");`);

    this.addSql(`create table "outbox_event" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "type" varchar(40) not null, "data" jsonb not null, "created_at" timestamptz not null, "dispatched_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "outbox_event_workspace_id_index" on "outbox_event" ("workspace_id");`);
    this.addSql(`create index "outbox_event_dispatched_at_index" on "outbox_event" ("dispatched_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_balance" cascade;`);
    this.addSql(`drop table if exists "credit_ledger" cascade;`);
    this.addSql(`drop table if exists "outbox_event" cascade;`);
  }

}
