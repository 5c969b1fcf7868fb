//! MCP's log levels and the registry's, one for one. Logging is deprecated by SEP-2577 (rmcp
//! marks it so); clients and servers of the protocol versions before it still use it.
#![allow(deprecated)]

use rmcp::model::LoggingLevel;

use crate::tool::LogLevel;

/// rmcp's level as the registry's.
pub(crate) fn log_level_of(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// The registry's level as rmcp's.
pub(crate) fn logging_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_goes_there_and_back() {
        for level in LogLevel::ALL {
            assert_eq!(log_level_of(logging_level(level)), level);
            // The names agree with the protocol's.
            let name = serde_json::to_value(logging_level(level)).unwrap();
            assert_eq!(name, level.as_str());
        }
    }
}
