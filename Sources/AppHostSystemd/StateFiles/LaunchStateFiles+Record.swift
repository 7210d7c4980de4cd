import AppHost
import AppHostSupport

extension LaunchStateFiles.Record {
    /// Why `launch-state.json` could not be read.
    package struct FormatError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The record as `JSONEncoder` with `.prettyPrinted` and `.sortedKeys` writes it.
    package var json: [UInt8] {
        Array("""
            {
              "installationID" : "\(installationID)",
              "lastLaunch" : "\(lastLaunch.iso8601)",
              "launchCount" : \(launchCount)
            }
            """.utf8)
    }

    /// Reads a JSON object with the three keys, in any order and spacing; other keys are
    /// ignored, as `JSONDecoder` would.
    package init(json bytes: [UInt8]) throws(FormatError) {
        let fields: JSONValue
        do {
            fields = try JSONValue(parsing: bytes)
        } catch {
            throw FormatError(description: error.description)
        }
        guard case .object = fields else { throw FormatError(description: "not a JSON object") }
        func string(_ key: String) throws(FormatError) -> String {
            guard let value = fields[key]?.string else { throw FormatError(description: "\"\(key)\" is missing or not a string") }
            return value
        }
        guard let installationID = InstallationID(try string("installationID")) else {
            throw FormatError(description: "\"installationID\" is not a UUID")
        }
        guard let lastLaunch = UnixTime(iso8601: try string("lastLaunch")) else {
            throw FormatError(description: "\"lastLaunch\" is not an ISO 8601 date")
        }
        guard let launchCount = fields["launchCount"]?.integer, launchCount >= 0 else {
            throw FormatError(description: "\"launchCount\" is missing or not a count")
        }
        self.init(installationID: installationID, launchCount: launchCount, lastLaunch: lastLaunch)
    }
}
