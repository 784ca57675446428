import { Migration } from '@mikro-orm/migrations';

export class Migration20261127061439 extends Migration {

  override name = 'Migration20261127061439';

  override up(): void | Promise<void> {
    this.addSql(`create table \`messaging_contact\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`wa_id\` text null, \`email\` text null, \`name\` text null, \`first_name\` text null, \`last_name\` text null, \`tags_text\` text not null, \`opted_in\` integer not null, \`blocked\` integer not null, \`search_text\` text not null, \`last_messaged_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`messaging_contact_workspace_id_wa_id_unique\` on \`messaging_contact\` (\`workspace_id\`, \`wa_id\`);`);
    this.addSql(`create unique index \`messaging_contact_workspace_id_email_unique\` on \`messaging_contact\` (\`workspace_id\`, \`email\`);`);

    this.addSql(`create table \`messaging_message\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`channel\` text not null, \`account_id\` text not null, \`recipient\` text not null, \`type\` text not null, \`template_name\` text null, \`language_code\` text null, \`render_id\` text null, \`media_url\` text null, \`status\` text not null, \`provider_message_id\` text null, \`idempotency_key\` text null, \`created_at\` datetime not null, \`sent_at\` datetime null);`);
    this.addSql(`create index \`messaging_message_workspace_id_created_at_index\` on \`messaging_message\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create unique index \`messaging_message_workspace_id_idempotency_key_unique\` on \`messaging_message\` (\`workspace_id\`, \`idempotency_key\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`messaging_contact\`;`);
    this.addSql(`drop table if exists \`messaging_message\`;`);
  }

}
