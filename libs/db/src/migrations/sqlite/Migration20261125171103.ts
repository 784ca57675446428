import { Migration } from '@mikro-orm/migrations';

export class Migration20261125171103 extends Migration {

  override name = 'Migration20261125171103';

  override up(): void | Promise<void> {
    this.addSql(`create table \`integration_connection\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`provider\` text not null, \`status\` text not null, \`engine\` text not null, \`base_url\` text null, \`account_email\` text null, \`account_name\` text null, \`credentials_sealed\` text not null, \`connected_at\` datetime not null, \`lapsed_at\` datetime null, \`lapsed_reason\` text null, \`updated_at\` datetime not null);`);
    this.addSql(`create unique index \`integration_connection_workspace_id_provider_unique\` on \`integration_connection\` (\`workspace_id\`, \`provider\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`integration_connection\`;`);
  }

}
