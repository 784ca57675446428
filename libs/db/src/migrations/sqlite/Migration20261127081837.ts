import { Migration } from '@mikro-orm/migrations';

export class Migration20261127081837 extends Migration {

  override name = 'Migration20261127081837';

  override up(): void | Promise<void> {
    this.addSql(`create table \`messaging_campaign_recipient\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`campaign_id\` text not null, \`position\` integer not null, \`recipient\` text not null, \`name\` text null, \`variables\` json null, \`status\` text not null, \`error_code\` text null, \`reason\` text null, \`provider_message_id\` text null, \`message_id\` text null, \`claimed_by\` text null, \`attempts\` integer not null, \`updated_at\` datetime not null, \`sent_at\` datetime null);`);
    this.addSql(`create index \`messaging_campaign_recipient_campaign_id_status_index\` on \`messaging_campaign_recipient\` (\`campaign_id\`, \`status\`);`);
    this.addSql(`create unique index \`messaging_campaign_recipient_campaign_id_position_unique\` on \`messaging_campaign_recipient\` (\`campaign_id\`, \`position\`);`);

    this.addSql(`create table \`messaging_campaign\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`name\` text not null, \`channel\` text not null, \`template_name\` text not null, \`language_code\` text null, \`render_id\` text null, \`media_url\` text null, \`common_variables\` json not null, \`rate_limit_per_second\` integer not null, \`total\` integer not null, \`status\` text not null, \`idempotency_key\` text null, \`created_at\` datetime not null, \`completed_at\` datetime null);`);
    this.addSql(`create index \`messaging_campaign_workspace_id_created_at_index\` on \`messaging_campaign\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create unique index \`messaging_campaign_workspace_id_idempotency_key_unique\` on \`messaging_campaign\` (\`workspace_id\`, \`idempotency_key\`);`);

    this.addSql(`alter table \`messaging_message\` add column \`error\` text null;`);
    this.addSql(`alter table \`messaging_message\` add column \`status_at\` datetime null;`);
    this.addSql(`create index \`messaging_message_workspace_id_provider_message_id_index\` on \`messaging_message\` (\`workspace_id\`, \`provider_message_id\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`messaging_campaign_recipient\`;`);
    this.addSql(`drop table if exists \`messaging_campaign\`;`);

    this.addSql(`drop index \`messaging_message_workspace_id_provider_message_id_index\`;`);
    this.addSql(`alter table \`messaging_message\` drop column \`error\`;`);
    this.addSql(`alter table \`messaging_message\` drop column \`status_at\`;`);
  }

}
