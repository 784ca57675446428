import { Migration } from '@mikro-orm/migrations';

export class Migration20261125174741 extends Migration {

  override name = 'Migration20261125174741';

  override up(): void | Promise<void> {
    this.addSql(`create table \`speech_recognition\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`cache_key\` text not null, \`provider\` text not null, \`language_code\` text not null, \`model\` text not null, \`words\` json not null, \`audio_sec\` double not null, \`created_at\` datetime not null);`);
    this.addSql(`create unique index \`speech_recognition_workspace_id_cache_key_unique\` on \`speech_recognition\` (\`workspace_id\`, \`cache_key\`);`);

    this.addSql(`create table \`transcription\` (\`id\` text not null primary key, \`workspace_id\` text not null, \`status\` text not null, \`route\` text not null, \`provider\` text not null, \`engine\` text not null, \`source_kind\` text not null, \`source_value\` text not null, \`settings\` json not null, \`cue_options\` json not null, \`cache_mode\` text not null, \`save\` integer not null, \`name\` text null, \`audio_hash\` text null, \`audio_sec\` double null, \`from_cache\` integer not null, \`recognition_id\` text null, \`language_code\` text null, \`model\` text null, \`text\` text null, \`cues\` json null, \`vtt_key\` text null, \`srt_key\` text null, \`error\` json null, \`attempts\` integer not null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`completed_at\` datetime null);`);
    this.addSql(`create index \`transcription_workspace_id_created_at_index\` on \`transcription\` (\`workspace_id\`, \`created_at\`);`);
    this.addSql(`create index \`transcription_workspace_id_source_kind_source_value_index\` on \`transcription\` (\`workspace_id\`, \`source_kind\`, \`source_value\`);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`speech_recognition\`;`);
    this.addSql(`drop table if exists \`transcription\`;`);
  }

}
