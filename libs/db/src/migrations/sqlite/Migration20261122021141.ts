import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021141 extends Migration {

  override name = 'Migration20261122021141';

  override up(): void | Promise<void> {
    this.addSql(`create table \`api_key\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`mode\` text not null, \`name\` text null, \`hash\` text not null, \`hint\` text not null, \`scopes\` json not null, \`ip_allowlist\` json not null, \`expires_at\` datetime null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`api_key_workspace_id_index\` on \`api_key\` (\`workspace_id\`);`);
    this.addSql(`create unique index \`api_key_hash_unique\` on \`api_key\` (\`hash\`);`);

    this.addSql(`create table \`workspace\` (\`id\` text not null primary key, \`name\` text not null, \`plan\` text not null, \`suspended_at\` datetime null, \`callback_secret_sealed\` text not null, \`default_callback_url\` text null, \`created_at\` datetime not null, \`updated_at\` datetime not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`api_key\`;`);
    this.addSql(`drop table if exists \`workspace\`;`);
  }

}
