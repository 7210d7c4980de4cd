import Logging

/// The launch over the configuration's tree, and what it did so far: services in order, a
/// group as one flow rolled back together, a one-of's chosen child, a first-of's children one by
/// one until one launches whole. Each service launches through `LaunchFlow.launchOne`; a
/// service that joins a running host (a reload's, a restart's) through
/// `launchIntoCurrentState`.
struct LaunchFlow {
    let indexByName: [String: Int]
    /// Launched services, in launch order.
    var launched: [Int] = []
    /// Services a first-of did not choose: they leave the list when the launch succeeds.
    var dropped: Set<Int> = []
    /// The service a terminate stopped waiting for, inside one of its launch hooks.
    var cutShort: Int?
    var tally = HookTally()

    /// A flow over `services`, found by name.
    init(services: [ServiceSlot]) {
        indexByName = Dictionary(uniqueKeysWithValues: services.indices.map { (services[$0].name, $0) })
    }

    /// Launches `nodes` as one flow, in order: a required node's failure ends the flow, rolls
    /// back what the flow launched (unless it is the host's own flow, which the caller rolls
    /// back by terminating) and is returned; an optional node's failure disables it and the
    /// flow goes on.
    mutating func launch(_ nodes: [ServiceDescriptor], path: String?, options: LaunchOptions, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        let flowStart = launched.count
        for node in nodes {
            let name = path.map { "\($0)/\(node.name)" } ?? node.name
            guard let failure = await launchNode(node, name: name, options: options, loop: &loop, group: &group) else { continue }
            if failure.reason == .terminated { return failure }
            // The rest of a composite that failed gets no calls.
            let launchedSet = Set(launched)
            for leaf in node.leaves(path: path) {
                if let index = indexByName[leaf.name], !launchedSet.contains(index), loop.services[index].health.isEnabled {
                    loop.services[index].disable(reason: "not launched: \(failure)")
                }
            }
            if node.isRequired {
                if let path {
                    let flow = Array(launched[flowStart...])
                    launched.removeSubrange(flowStart...)
                    await Self.rollBack(flow, of: path, because: failure, loop: &loop, group: &group)
                }
                return failure
            }
            loop.logger.warning("optional service disabled: \(failure)", metadata: ["service": "\(name)"])
        }
        return nil
    }

    /// Launches one entry: a service, or a composite as its kind says. Nil when it launched.
    private mutating func launchNode(_ node: ServiceDescriptor, name: String, options: LaunchOptions, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        guard let composite = node.composite else {
            let index = indexByName[name]!
            let failure = await Self.launchOne(index, options: loop.services[index].context.launchOptions ?? options, tally: &tally, loop: &loop, group: &group)
            note(failure, of: index, name: name, loop: &loop)
            return failure
        }
        switch composite.kind {
        case .group:
            return await launch(composite.children, path: name, options: options, loop: &loop, group: &group)
        case .oneOf(let chosen, let reason):
            loop.logger.info("\(name): one-of chose \(name)/\(chosen) (\(reason))", metadata: ["service": "\(name)"])
            return await launch(composite.candidates.map(composite.member), path: name, options: options, loop: &loop, group: &group)
        case .firstOf:
            var passedOver: [String] = []
            var lastFailure: LaunchFailure?
            for (position, child) in composite.children.enumerated() {
                if let failure = await launch([composite.member(child)], path: name, options: options, loop: &loop, group: &group) {
                    if failure.reason == .terminated { return failure }
                    passedOver.append("\(failure)")
                    lastFailure = failure
                    continue
                }
                drop(composite.children, except: position, of: name)
                Self.logFirstOf(name, chose: child.name, after: passedOver, logger: loop.logger)
                return nil
            }
            Self.logFirstOf(name, chose: nil, after: passedOver, logger: loop.logger)
            return lastFailure
        }
    }

    // The synchronous steps of `launchNode` are functions of their own, never inlined into it:
    // see `launchOne`'s.

    /// A service's launch in the flow's record, and the next step's time limit for systemd
    /// (`EXTEND_TIMEOUT_USEC=`). A terminate that cut its hook short marks it cut short; any
    /// other failure disables it.
    @inline(never)
    private mutating func note(_ failure: LaunchFailure?, of index: Int, name: String, loop: inout HostLoop) {
        if let failure {
            if failure.reason == .terminated {
                if Self.isStarted(index, failure, in: loop.services) { cutShort = index }
                return
            }
            // A refusal or an overrun is a failure of the launch too, for its record.
            if tally.failures[name] == nil { tally.failures[name] = failure.description }
            loop.services[index].disable(reason: failure.description)
        } else {
            launched.append(index)
        }
        let next = index + 1 < loop.services.count
            ? loop.services[index + 1].launchDeadline * 2
            : loop.configuration.hookDeadline * max(1, loop.services.count)
        loop.outlet.report(.progress(next: next))
    }

    /// The children of first-of `name` but the `chosen` one: the children before the chosen
    /// one failed and those after it are not launched, so neither is one of the host's services
    /// from now on. Passing over a child is what a first-of is for: not a failure of the launch.
    @inline(never)
    private mutating func drop(_ children: [ServiceDescriptor], except chosen: Int, of name: String) {
        for (position, other) in children.enumerated() where position != chosen {
            for leaf in other.leaves(path: name) {
                if let index = indexByName[leaf.name] { dropped.insert(index) }
                tally.failures[leaf.name] = nil
            }
        }
    }

    /// The launch's line about a first-of: the child it chose and those it passed over, or that
    /// none launched.
    static func logFirstOf(_ name: String, chose child: String?, after passedOver: [String], logger: Logger) {
        guard let child else {
            logger.warning("\(name): first-of found no child that launches: \(passedOver.joined(separator: "; "))", metadata: ["service": "\(name)"])
            return
        }
        let after = passedOver.isEmpty ? "" : " after \(passedOver.joined(separator: "; "))"
        logger.info("\(name): first-of chose \(name)/\(child)\(after)", metadata: ["service": "\(name)"])
    }

    /// A group's rollback: `willTerminate` to what it launched, in reverse order; they stay in
    /// the list, disabled with the reason.
    private static func rollBack(_ launched: [Int], of group: String, because failure: LaunchFailure, loop: inout HostLoop, group taskGroup: inout DiscardingTaskGroup) async {
        guard !launched.isEmpty else { return }
        loop.logger.notice("\(group): rolling back \(launched.count.counted("service")): \(failure)", metadata: ["service": "\(group)"])
        for index in launched.reversed() {
            await loop.terminateOne(index, group: &taskGroup)
            loop.services[index].disable(reason: "rolled back with \(group): \(failure)")
        }
    }
}
