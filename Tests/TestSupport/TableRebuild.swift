/// The statements of SQLite's table rebuild (sqlite.org/lang_altertable.html, "Making Other
/// Kinds Of Table Schema Changes"), made from a table's schema as `sqlite_master` gives it:
/// a new table, every row copied, the old one dropped, the new one renamed, its indexes made
/// again. The change a real migration would make is left out: the rebuild is what is tested.
public func tableRebuild(_ table: String, createSQL: String, indexSQL: [String]) -> String {
    ([createSQL.replacingOccurrences(of: "CREATE TABLE \(table)", with: "CREATE TABLE new_\(table)"),
      "INSERT INTO new_\(table) SELECT * FROM \(table)", "DROP TABLE \(table)", "ALTER TABLE new_\(table) RENAME TO \(table)"]
        + indexSQL).joined(separator: ";\n") + ";\n"
}
