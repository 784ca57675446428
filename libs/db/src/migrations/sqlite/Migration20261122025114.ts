import { Migration } from '@mikro-orm/migrations';

export class Migration20261122025114 extends Migration {

  override name = 'Migration20261122025114';

  override up(): void | Promise<void> {
    this.addSql(`create table \`dev_message\` (\`id\` text not null primary key, \`channel\` text not null, \`recipient\` text not null, \`body\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`dev_message_recipient_index\` on \`dev_message\` (\`recipient\`);`);

    this.addSql(`create table \`membership\` (\`id\` text not null primary key, \`user_id\` text not null, \`workspace_id\` text not null, \`role\` text not null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`membership_user_id_index\` on \`membership\` (\`user_id\`);`);
    this.addSql(`create index \`membership_workspace_id_index\` on \`membership\` (\`workspace_id\`);`);
    this.addSql(`create unique index \`membership_user_id_workspace_id_unique\` on \`membership\` (\`user_id\`, \`workspace_id\`);`);

    this.addSql(`create table \`otp_code\` (\`id\` text not null primary key, \`phone\` text not null, \`code_hash\` text not null, \`attempts\` integer not null, \`expires_at\` datetime not null, \`closed_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`otp_code_phone_index\` on \`otp_code\` (\`phone\`);`);

    this.addSql(`create table \`refresh_token\` (\`id\` text not null primary key, \`user_id\` text not null, \`family_id\` text not null, \`token_hash\` text not null, \`expires_at\` datetime not null, \`rotated_at\` datetime null, \`revoked_at\` datetime null, \`created_at\` datetime not null);`);
    this.addSql(`create index \`refresh_token_user_id_index\` on \`refresh_token\` (\`user_id\`);`);
    this.addSql(`create index \`refresh_token_family_id_index\` on \`refresh_token\` (\`family_id\`);`);
    this.addSql(`create unique index \`refresh_token_token_hash_unique\` on \`refresh_token\` (\`token_hash\`);`);

    this.addSql(`create table \`app_user\` (\`id\` text not null primary key, \`phone\` text not null, \`name\` text null, \`session_epoch\` integer not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`app_user_phone_unique\` on \`app_user\` (\`phone\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`dev_message\`;`);
    this.addSql(`drop table if exists \`membership\`;`);
    this.addSql(`drop table if exists \`otp_code\`;`);
    this.addSql(`drop table if exists \`refresh_token\`;`);
    this.addSql(`drop table if exists \`app_user\`;`);
  }

}
