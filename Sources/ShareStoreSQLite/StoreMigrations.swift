import GRDB

/// The store's schema, as named migrations. A shipped migration is never edited: add a new one.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: users, zones, records, shares, changes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE counter (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
                    INSERT INTO counter (id, seq) VALUES (1, 0);

                    CREATE TABLE user (
                        recordName TEXT PRIMARY KEY NOT NULL,
                        email TEXT UNIQUE,
                        name TEXT);

                    CREATE TABLE zone (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        scope TEXT NOT NULL,
                        owner TEXT NOT NULL,
                        name TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        UNIQUE (scope, owner, name));
                    INSERT INTO zone (scope, owner, name, seq) VALUES ('public', '', '_defaultZone', 0);

                    CREATE TABLE record (
                        zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        type TEXT NOT NULL,
                        fields BLOB NOT NULL,
                        parent TEXT,
                        shareRoot TEXT,
                        seq INTEGER NOT NULL,
                        createdAt INTEGER NOT NULL,
                        createdBy TEXT NOT NULL,
                        modifiedAt INTEGER NOT NULL,
                        modifiedBy TEXT NOT NULL,
                        PRIMARY KEY (zoneId, name)) WITHOUT ROWID;
                    CREATE INDEX record_changes ON record (zoneId, seq);
                    CREATE INDEX record_type ON record (zoneId, type);
                    CREATE INDEX record_children ON record (zoneId, parent) WHERE parent IS NOT NULL;
                    CREATE INDEX record_hierarchy ON record (zoneId, shareRoot) WHERE shareRoot IS NOT NULL;

                    CREATE TABLE reference (
                        zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,
                        source TEXT NOT NULL,
                        target TEXT NOT NULL,
                        PRIMARY KEY (zoneId, target, source)) WITHOUT ROWID;
                    CREATE INDEX reference_source ON reference (zoneId, source);

                    CREATE TABLE tombstone (
                        zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        shareRoot TEXT,
                        PRIMARY KEY (zoneId, name)) WITHOUT ROWID;
                    CREATE INDEX tombstone_changes ON tombstone (zoneId, seq);

                    CREATE TABLE share (
                        zoneId INTEGER NOT NULL REFERENCES zone(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        root TEXT,
                        title TEXT,
                        publicPermission TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        shortGUID TEXT NOT NULL UNIQUE,
                        PRIMARY KEY (zoneId, name));
                    CREATE UNIQUE INDEX share_root ON share (zoneId, root) WHERE root IS NOT NULL;

                    CREATE TABLE participant (
                        zoneId INTEGER NOT NULL,
                        shareName TEXT NOT NULL,
                        user TEXT NOT NULL,
                        role TEXT NOT NULL,
                        permission TEXT NOT NULL,
                        acceptance TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        PRIMARY KEY (zoneId, shareName, user),
                        FOREIGN KEY (zoneId, shareName) REFERENCES share (zoneId, name) ON DELETE CASCADE);
                    CREATE INDEX participant_user ON participant (user, acceptance);

                    CREATE TABLE zoneRemoval (
                        scope TEXT NOT NULL,
                        user TEXT NOT NULL,
                        owner TEXT NOT NULL,
                        zoneName TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (scope, user, owner, zoneName));
                    """)
        }
        migrator.registerMigration("v2: a record's change tag apart from its place in the change feed") { db in
            // A record that joins or leaves a shared hierarchy because of its ancestors gets a new place in the
            // change feed (participants hear of it) but keeps its change tag: it was not written, and a write
            // based on the tag it had must still succeed. NULL means the tag is `seq`'s.
            try db.execute(sql: "ALTER TABLE record ADD COLUMN tagSeq INTEGER")
        }
        migrator.registerMigration("v3: the store's epoch in its change tokens") { db in
            // A change token names the store's life it was handed out in: after a reset (or for another store
            // file) an old token is refused instead of silently reporting nothing changed.
            try db.execute(sql: "ALTER TABLE counter ADD COLUMN epoch TEXT NOT NULL DEFAULT ''")
            try db.execute(sql: "UPDATE counter SET epoch = ?", arguments: [ChangeSequence.newEpoch()])
        }
        migrator.registerMigration("v4: a schema per environment") { db in
            // Record types, typed fields and indexes of development and production, one row each, as the
            // JSON of `Schema` (read and written whole: a schema is small, and `SchemaRules` works on the value).
            try db.execute(
                sql: """
                    CREATE TABLE recordSchema (
                        environment TEXT PRIMARY KEY NOT NULL,
                        definition BLOB NOT NULL)
                    """)
        }
        migrator.registerMigration("v5: users' phone numbers and discoverability") { db in
            // A user may be looked up by phone number (E.164, unique) and is discoverable only once they say
            // so, as a new iCloud user is not (`Store.discoverUsers`).
            try db.execute(sql: "ALTER TABLE user ADD COLUMN phone TEXT")
            try db.execute(sql: "ALTER TABLE user ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "CREATE UNIQUE INDEX user_phone ON user (phone) WHERE phone IS NOT NULL")
        }
        migrator.registerMigration("v6: subscriptions and notifications") { db in
            // A subscription is one user's in one database, kept as the JSON of `Subscription`; notifications
            // are kept for their recipient in the order they were made, and a channel (`tokens/create`)
            // remembers how far it has delivered them.
            try db.execute(
                sql: """
                    CREATE TABLE subscription (
                        user TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        id TEXT NOT NULL,
                        definition BLOB NOT NULL,
                        PRIMARY KEY (user, scope, id)) WITHOUT ROWID;
                    CREATE INDEX subscription_scope ON subscription (scope);

                    CREATE TABLE notification (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        recipient TEXT NOT NULL,
                        payload BLOB NOT NULL);
                    CREATE INDEX notification_recipient ON notification (recipient, seq);

                    CREATE TABLE notificationChannel (
                        token TEXT PRIMARY KEY NOT NULL,
                        user TEXT NOT NULL,
                        apnsEnvironment TEXT NOT NULL,
                        delivered INTEGER NOT NULL);
                    """)
        }
        migrator.registerMigration("v7: assets") { db in
            // The bytes of assets uploaded through `sharelane serve`'s `assets/upload`, once per content,
            // under their checksum (`fnv1a64:HEX`); records keep the checksum in their ASSETID fields.
            try db.execute(
                sql: """
                    CREATE TABLE asset (
                        checksum TEXT PRIMARY KEY NOT NULL,
                        size INTEGER NOT NULL,
                        bytes BLOB NOT NULL) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("v8: the container and environment a file holds") { db in
            // One row once a world has claimed the file (`SQLiteWorlds`); a file written before containers
            // were kept apart has none until the first container and environment to open it claims it.
            try db.execute(
                sql: """
                    CREATE TABLE storeWorld (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        container TEXT NOT NULL,
                        environment TEXT NOT NULL)
                    """)
        }
        migrator.registerMigration("v9: when and by whom a share was saved") { db in
            // Null in the shares saved before: when they were created is not known; a later save stamps
            // `modified`.
            for column in ["createdAt INTEGER", "createdBy TEXT", "modifiedAt INTEGER", "modifiedBy TEXT"] {
                try db.execute(sql: "ALTER TABLE share ADD COLUMN \(column)")
            }
        }
        return migrator
    }
}
