import Testing
@testable import OfflineCache

/// A migration that has shipped is frozen: a cache migrated by it must never meet another text of
/// it. Each carried SQL migration is pinned here by a checksum (64-bit FNV-1a of its text); a
/// change to one fails this test, and a new migration is pinned when it lands on main.
@Suite struct FrozenMigrationsTests {
    static let pinned: [String: UInt64] = [
        "0001_initial.sql": 0xdf5fcbab83cecf41,
        "0002_sync_leases.sql": 0x0368ee418a141dc5,
        "0003_conditional_requests_and_backoff.sql": 0xd1a0c8f9664b9763,
        "0004_change_log.sql": 0xfa705621d68718c4,
        "0005_clustered_transactions_and_loads.sql": 0x9e3a2143b125a1fd,
        "0006_source_ca_cert.sql": 0x60faea9d1919d6d3,
        "0007_source_removal_limit.sql": 0xed138326b0fe6989,
        "0008_source_alert_after.sql": 0x71514d9ed1e48359,
        "0009_run_ids_never_repeat.sql": 0x23c2223abea14bd0,
        "0010_generic_json_sources.sql": 0x731f18f2df8543e7,
        "0013_run_totals.sql": 0xf661c443c9647dc7,
        "0014_paging_styles.sql": 0x3972ffd787975152,
        "0015_incremental_syncs.sql": 0xca802ef57a4f2861,
        "0016_oauth_client_credentials.sql": 0xe3203fc3b4e954ed,
        "0017_nested_data.sql": 0x443929d9064dd2a4,
        "0018_history_and_search.sql": 0xaf474ef1b440128b,
        "0020_held_sweeps_index_damage_and_horizon_causes.sql": 0xa98f4f5bff56af30,
        "0021_source_settings_as_one_document.sql": 0x8a79f00aaeb08584,
        "0022_heartbeat.sql": 0x7a61f9adc1bb7b25,
        "0023_search_built_on_first_use.sql": 0xa36bbf1c58dcac57,
        "0024_change_log_by_row.sql": 0xa462cc1b4a9199a3,
        "0025_search_text_beside_documents.sql": 0xd6dfad5ad35a1667,
        "0026_local_edits.sql": 0x17fd9a1538086fb5,
    ]

    static func checksum(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    @Test func everyShippedMigrationKeepsItsText() {
        let carried = Dictionary(uniqueKeysWithValues: Migrator.embedded.map { ($0.file, Self.checksum($0.sql)) })
        for (file, sum) in Self.pinned.sorted(by: { $0.key < $1.key }) {
            #expect(carried[file] == sum, "\(file) changed after it shipped: write a new migration instead")
        }
        #expect(Set(carried.keys) == Set(Self.pinned.keys), "a migration is not pinned (or one was removed): \(Set(carried.keys).symmetricDifference(Self.pinned.keys).sorted())")
        // The checksum itself tells texts apart.
        #expect(Self.checksum("SELECT 1;") != Self.checksum("SELECT 2;"))
    }
}
