import { Migration } from '@mikro-orm/migrations';

export class Migration20261125171103 extends Migration {

  override name = 'Migration20261125171103';

  override up(): void | Promise<void> {
    this.addSql(`create table "integration_connection" ("id" varchar(32) not null, "workspace_id" varchar(32) not null, "provider" varchar(32) not null, "status" varchar(16) not null, "engine" varchar(8) not null, "base_url" text null, "account_email" varchar(320) null, "account_name" varchar(200) null, "credentials_sealed" text not null, "connected_at" timestamptz not null, "lapsed_at" timestamptz null, "lapsed_reason" varchar(300) null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "integration_connection" add constraint "integration_connection_workspace_id_provider_unique" unique ("workspace_id", "provider");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "integration_connection" cascade;`);
  }

}
