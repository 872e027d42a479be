import Foundation
import ShareKit

/// Draws an access matrix as text, markdown, JSON or a self-contained HTML page.
public struct AccessMatrixRenderer: Sendable {
    public var style: AccessStyle

    public init(style: AccessStyle = .plain) {
        self.style = style
    }

    /// The matrix in `format`, ending with a newline. `title` heads the text, markdown and HTML renderings.
    public func render(_ matrix: AccessMatrix, format: AccessFormat, title: String) -> String {
        switch format {
        case .text: text(matrix, title: title)
        case .markdown: markdown(matrix, title: title)
        case .json: json(matrix)
        case .html: htmlPage(matrix, title: title)
        }
    }

    // MARK: - Text

    /// `title`, the table with a row per user and a column per share, then what the public shares let anyone
    /// do. Names come from the store: control characters are escaped.
    public func text(_ matrix: AccessMatrix, title: String) -> String {
        var lines = [DisplayText.escaped(title)]
        guard !matrix.columns.isEmpty else {
            lines.append("No shares: nothing is shared with anyone.")
            return lines.joined(separator: "\n") + "\n"
        }
        let header = ["user"] + matrix.columns.map { DisplayText.escaped($0.label) }
        let rows = matrix.rows.indices.map { row in
            [(text: DisplayText.escaped(matrix.rows[row].label), cell: AccessCell?.none)]
                + matrix.cells[row].map { (text: $0.text, cell: Optional($0)) }
        }
        lines.append("")
        lines += TextTable.lines(header: header, rows: rows, style: style)
        let notes = publicNotes(matrix)
        if !notes.isEmpty {
            lines.append("")
            lines += notes.map { DisplayText.escaped($0) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A line for each share with a public permission: anyone with its URL may join with that right.
    func publicNotes(_ matrix: AccessMatrix) -> [String] {
        matrix.columns.compactMap { column in
            guard column.share.publicPermission != .none else { return nil }
            return
                "\(column.label) is public: anyone with its URL joins with \(column.share.publicPermission.recipeName)."
        }
    }

    // MARK: - Markdown

    public func markdown(_ matrix: AccessMatrix, title: String) -> String {
        var lines = ["#### \(Self.markdownEscaped(title))", ""]
        guard !matrix.columns.isEmpty else {
            return (lines + ["No shares: nothing is shared with anyone."]).joined(separator: "\n") + "\n"
        }
        lines.append(
            "| user | " + matrix.columns.map { "`\(Self.markdownEscaped($0.label))`" }.joined(separator: " | ") + " |")
        lines.append("|---|" + String(repeating: "---|", count: matrix.columns.count))
        for (row, user) in matrix.rows.enumerated() {
            lines.append(
                "| \(Self.markdownEscaped(user.label)) | "
                    + matrix.cells[row].map { Self.markdownCell($0) }.joined(separator: " | ") + " |")
        }
        let notes = publicNotes(matrix)
        if !notes.isEmpty {
            lines.append("")
            lines += notes.map { "- " + Self.markdownEscaped($0) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A cell in a markdown table: the right in bold when it lets the user write.
    static func markdownCell(_ cell: AccessCell) -> String {
        cell.access.canWrite && cell.status != .pending ? "**\(cell.text)**" : cell.text
    }

    /// Text that cannot break a table row nor inject markup: pipes, angle brackets and control characters
    /// escaped.
    public static func markdownEscaped(_ text: String) -> String {
        DisplayText.escaped(text).replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "`", with: "'")
    }

    // MARK: - JSON

    struct JSONMatrix: Encodable {
        struct Column: Encodable {
            var id: String
            var label: String
            var owner: String
            var zone: String
            var root: String?
            var title: String?
            var publicPermission: String
        }
        struct Cell: Encodable {
            var user: String
            var column: String
            var access: String
            var status: String?
            var permission: String?
            var role: String?
        }
        var users: [SharingUser]
        var columns: [Column]
        var cells: [Cell]
    }

    /// `{"users": […], "columns": […], "cells": […]}`: a cell for each user and share, naming both by record
    /// name and column id, with the right in one word and the participation in recipe words.
    public func json(_ matrix: AccessMatrix) -> String {
        let value = JSONMatrix(
            users: matrix.rows,
            columns: matrix.columns.map {
                JSONMatrix.Column(
                    id: $0.id, label: $0.label, owner: $0.share.zoneID.ownerRecordName, zone: $0.share.zoneID.zoneName,
                    root: $0.share.rootRecordName, title: $0.share.title,
                    publicPermission: $0.share.publicPermission.recipeName)
            },
            cells: matrix.rows.indices.flatMap { row in
                matrix.columns.indices.map { column in
                    let cell = matrix.cells[row][column]
                    return JSONMatrix.Cell(
                        user: matrix.rows[row].recordName, column: matrix.columns[column].id, access: cell.word,
                        status: cell.status?.recipeName, permission: cell.permission?.recipeName,
                        role: cell.role?.recipeName)
                }
            })
        return SharingSnapshotJSON.text(value)
    }

    // MARK: - HTML

    /// The matrix as an HTML `<table>` (with the public notes after it), for a page of one's own. Every
    /// name is escaped.
    public func htmlTable(_ matrix: AccessMatrix) -> String {
        guard !matrix.columns.isEmpty else {
            return "<p class=\"empty\">No shares: nothing is shared with anyone.</p>\n"
        }
        var out = "<table class=\"access\">\n<thead><tr><th scope=\"col\">user</th>"
        for column in matrix.columns {
            out += "<th scope=\"col\">\(HTML.escaped(column.label))</th>"
        }
        out += "</tr></thead>\n<tbody>\n"
        for (row, user) in matrix.rows.enumerated() {
            out += "<tr><th scope=\"row\">\(HTML.escaped(user.label))</th>"
            for cell in matrix.cells[row] {
                out += "<td class=\"\(Self.cssClass(cell))\">\(HTML.escaped(cell.text))</td>"
            }
            out += "</tr>\n"
        }
        out += "</tbody>\n</table>\n"
        let notes = publicNotes(matrix)
        if !notes.isEmpty {
            out += "<ul class=\"notes\">" + notes.map { "<li>\(HTML.escaped($0))</li>" }.joined() + "</ul>\n"
        }
        return out
    }

    /// The CSS class of a cell: its right, then its participation (`write`, `none pending`).
    public static func cssClass(_ cell: AccessCell) -> String {
        ([cell.word] + (cell.status.map { $0 == .accepted ? [] : [$0.recipeName] } ?? [])).joined(separator: " ")
    }

    /// The style the HTML table's cells take, for any page that shows one.
    public static let css = """
        table.access { border-collapse: collapse; font: 14px/1.4 system-ui, sans-serif; }
        table.access th, table.access td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; }
        table.access thead th { background: #f6f8fa; }
        td.owner { background: #ddf4ff; font-weight: 600; }
        td.administrator { background: #fbefff; }
        td.write { background: #dafbe1; }
        td.read { background: #fff8c5; }
        td.none { color: #656d76; }
        td.pending { font-style: italic; }
        td.removed { text-decoration: line-through; }
        """

    /// A page that needs nothing else: the title, the table and its style.
    public func htmlPage(_ matrix: AccessMatrix, title: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(HTML.escaped(title))</title>
        <style>
        body { font: 15px/1.5 system-ui, sans-serif; margin: 2em; color: #1f2328; }
        \(Self.css)
        </style>
        </head>
        <body>
        <h1>\(HTML.escaped(title))</h1>
        \(htmlTable(matrix))</body>
        </html>

        """
    }
}
