import OfflineCache

extension StreamMapping {
    /// `DatetimeBasedCursor` → an incremental sync: the start's request parameter is the
    /// watermark's, written in the cursor's `datetime_format`. cache's first sync is whole, and
    /// an end of now is no end.
    mutating func incremental(_ cursor: YAMLNode, _ options: inout [(String, JSONValue)], _ interpolation: inout Interpolation) throws(Refusal) {
        let type = cursor["type"]?.string ?? ""
        interpolation.parameters = cursor["$parameters"] ?? interpolation.parameters
        guard type == "DatetimeBasedCursor" else { throw Refusal(component: type.isEmpty ? "incremental_sync" : type, reason: "only DatetimeBasedCursor is read") }
        // An end of now is no end. A fixed one sent as a parameter cannot be kept to; one that
        // is not sent is named, and records after it are kept.
        let until = cursor["end_datetime"]?["datetime"]?.string ?? cursor["end_datetime"]?.string ?? ""
        let endsNow = until.isEmpty || until.contains("now_utc()") || until.contains("today_utc()")
        if let end = cursor["end_time_option"], !end.isNull {
            guard endsNow else {
                throw Refusal(component: "DatetimeBasedCursor", reason: "end_datetime '\(until)': a fixed end is not read (an end of now is no end)")
            }
            notes.append("DatetimeBasedCursor: the end is now, so none is sent")
        } else if !endsNow {
            notes.append("DatetimeBasedCursor: end_datetime '\(until)' not read: no end is sent, and records after it are kept")
        }
        guard let start = cursor["start_time_option"], !start.isNull else {
            notes.append("DatetimeBasedCursor: no start_time_option, so each sync is whole (the CDK filters records by time instead)")
            return
        }
        guard start["inject_into"]?.string ?? "request_parameter" == "request_parameter", let field = start["field_name"]?.string else {
            throw Refusal(component: "DatetimeBasedCursor", reason: "start_time_option: only a request parameter is read")
        }
        guard let cursorField = cursor["cursor_field"]?.string else { throw Refusal(component: "DatetimeBasedCursor", reason: "it has no cursor_field") }
        options.append(("since-param", .string(try interpolation.text(field, "DatetimeBasedCursor.start_time_option"))))
        options.append(("cursor-field", .string(try interpolation.text(cursorField, "DatetimeBasedCursor.cursor_field"))))
        if let pattern = cursor["datetime_format"]?.string {
            guard TimeFormat(pattern) != nil else {
                throw Refusal(component: "DatetimeBasedCursor", reason: "datetime_format '\(pattern)': a directive cache does not write (it writes %Y %m %d %H %M %S %f %s %z %Z, or %ms alone)")
            }
            options.append(("since-format", .string(pattern)))
        }
        if let step = cursor["step"]?.string {
            notes.append("DatetimeBasedCursor: step \(step) not read: one request asks for everything since the watermark")
        }
    }
}
