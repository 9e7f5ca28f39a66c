// Package all links every built-in connector into the binary.
package all

import (
	_ "github.com/streamsql/streamsql/connectors/blackhole"  // registers "blackhole"
	_ "github.com/streamsql/streamsql/connectors/datagen"    // registers "datagen"
	_ "github.com/streamsql/streamsql/connectors/filesystem" // registers "filesystem"
	_ "github.com/streamsql/streamsql/connectors/jdbc"       // registers "jdbc"
	_ "github.com/streamsql/streamsql/connectors/kafka"      // registers "kafka", "upsert-kafka"
	_ "github.com/streamsql/streamsql/connectors/mysql"      // registers "mysql" and the jdbc:mysql dialect
	_ "github.com/streamsql/streamsql/connectors/nexmark"    // registers "nexmark"
	_ "github.com/streamsql/streamsql/connectors/postgres"   // the jdbc dialect "postgresql", "postgres-cdc"
	_ "github.com/streamsql/streamsql/connectors/print"      // registers "print"
	_ "github.com/streamsql/streamsql/connectors/values"     // registers "values"
)
