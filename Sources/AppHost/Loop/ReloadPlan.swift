import Logging

/// What a reload does, worked out before it touches a service: the new configuration loaded and
/// checked, the services it stands for, the first-ofs it adds, and a new instance of every
/// service that is new or changed. Whatever can fail without side effects fails here, so a
/// failure keeps the running services as they are.
struct ReloadPlan {
    /// A first-of the reload adds, with each child's services.
    struct NewFirstOf {
        let name: String
        let children: [(name: String, leaves: [ServiceDescriptor])]
        var leaves: [ServiceDescriptor] { children.flatMap(\.leaves) }
    }

    let descriptors: [ServiceDescriptor]
    /// The services after the reload, diffed by path; a first-of stands for the child it chose.
    let leaves: [ServiceDescriptor]
    /// First-ofs the reload adds: launched as a launch would launch them.
    let newFirstOfs: [NewFirstOf]
    /// Every leaf of the new configuration, in its order: the services' order after the reload.
    let allLeaves: [ServiceDescriptor]
    /// A new instance of each service that is new or changed, by name.
    let fresh: [String: any ApplicationService]

    /// Loads the new configuration with `load` against the services running now.
    init(loading load: () throws -> [ServiceDescriptor], running services: [ServiceSlot], logger: Logger) throws(InvalidConfiguration) {
        do {
            descriptors = try load()
            try PluggableApplicationHost.checkServices(descriptors)
        } catch let errors as InvalidConfiguration {
            throw errors
        } catch let error as ConfigurationError {
            throw InvalidConfiguration(error)
        } catch {
            throw InvalidConfiguration(ConfigurationError(keyPath: "", message: "\(error)"))
        }
        var addedFirstOfs: [(name: String, children: [String])] = []
        leaves = descriptors.flatMap { Self.leaves(of: $0, running: services, logger: logger, addedFirstOfs: &addedFirstOfs) }
        // An added first-of's children as a launch would run them (required where it is).
        let allLeaves = descriptors.flatMap { $0.leaves() }
        self.allLeaves = allLeaves
        newFirstOfs = addedFirstOfs.map { firstOf in
            NewFirstOf(name: firstOf.name, children: firstOf.children.map { child in
                let path = "\(firstOf.name)/\(child)"
                return (child, allLeaves.filter { $0.name == path || $0.name.hasPrefix(path + "/") })
            })
        }
        let running = Dictionary(uniqueKeysWithValues: services.map { ($0.name, $0.descriptor) })
        var fresh: [String: any ApplicationService] = [:]
        var failures: [ConfigurationError] = []
        for (position, descriptor) in (leaves + newFirstOfs.flatMap(\.leaves)).enumerated() {
            if let old = running[descriptor.name], !old.differs(from: descriptor) { continue }
            do {
                fresh[descriptor.name] = try descriptor.makeService()
            } catch let error as ConfigurationError {
                failures.append(error)
            } catch {
                failures.append(ConfigurationError(file: descriptor.configuration.file, keyPath: "services[\(position)]", message: "\(descriptor.name): \(error)"))
            }
        }
        if let errors = InvalidConfiguration(failures) { throw errors }
        self.fresh = fresh
    }

    /// The services `descriptor` stands for after a reload, diffed by path as the top level is:
    /// its own leaves, except that a first-of keeps the child it chose at launch (a reload does
    /// not choose again; a restart does) and stands for nothing when none of its children runs.
    /// A first-of the reload adds goes into `addedFirstOfs` (its path, its children's names), to
    /// launch as a first-of does.
    private static func leaves(
        of descriptor: ServiceDescriptor, running services: [ServiceSlot], logger: Logger, addedFirstOfs: inout [(name: String, children: [String])]
    ) -> [ServiceDescriptor] {
        descriptor.leaves { name, composite in
            guard composite.kind == .firstOf else { return composite.candidates }
            let running = composite.children.first { services.isRunning("\(name)/\($0.name)") }
            if let running { return [running] }
            if services.contains(where: { $0.name.hasPrefix(name + "/") }) {
                logger.notice("\(name): no child of this first-of runs; a reload does not choose again (a restart does)", metadata: ["service": "\(name)"])
            } else {
                addedFirstOfs.append((name, composite.children.map(\.name)))
            }
            return []
        }
    }

    /// Carries the plan out on `loop`'s services: the removed get `willTerminate`, the changed
    /// take the new settings live or restart, the new launch into the host's state; the
    /// services then stand in the new file's order.
    func apply(to loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> ConfigurationDidReload {
        let oldIndex = Dictionary(uniqueKeysWithValues: loop.services.indices.map { (loop.services[$0].name, $0) })
        let newLeaves = leaves
        let newNames = Set(newLeaves.map(\.name))
        var removed: [String] = []
        var updated: [String] = []
        var restarted: [String] = []
        var added: [String] = []
        for index in loop.services.indices.reversed() where !newNames.contains(loop.services[index].name) {
            await loop.terminateOne(index, group: &group)
            removed.append(loop.services[index].name)
        }
        var order: [Int] = []
        for descriptor in newLeaves {
            guard let index = oldIndex[descriptor.name] else {
                order.append(await LaunchFlow.launchIntoCurrentState(descriptor, service: fresh[descriptor.name]!, loop: &loop, group: &group))
                added.append(descriptor.name)
                continue
            }
            guard loop.services[index].descriptor.differs(from: descriptor) else {
                loop.services[index].descriptor.restart = descriptor.restart
                loop.services[index].supervisor?.policy = descriptor.restart
                order.append(loop.services[index].id)
                continue
            }
            if loop.services[index].health.isEnabled, loop.services[index].descriptor.type == descriptor.type, await Self.updateLive(index, to: descriptor, loop: &loop, group: &group) {
                order.append(loop.services[index].id)
                updated.append(descriptor.name)
            } else {
                await loop.terminateOne(index, group: &group)
                order.append(await LaunchFlow.launchIntoCurrentState(descriptor, service: fresh[descriptor.name]!, loop: &loop, group: &group))
                restarted.append(descriptor.name)
            }
        }
        for firstOf in newFirstOfs {
            order += await launchAdded(firstOf, added: &added, loop: &loop, group: &group)
        }
        // In the new file's order; a first-of's chosen child sits where the first-of does.
        let kept = Set(order)
        let rank = Dictionary(uniqueKeysWithValues: allLeaves.enumerated().map { ($1.name, $0) })
        loop.setServices(loop.services.filter { kept.contains($0.id) }.sorted { rank[$0.name, default: .max] < rank[$1.name, default: .max] })
        loop.restorable.forgetRemovedServices(keeping: loop.services)
        loop.descriptors = descriptors
        loop.choices = descriptors.flatMap { loop.services.compositeChoices(of: $0) }
        return ConfigurationDidReload(added: added, removed: removed, updated: updated, restarted: restarted)
    }


    /// Launches a first-of a reload added into the host's state, as a launch would: its children
    /// in order until one launches whole; a child that fails is taken back. Returns the ids of
    /// the chosen child's services.
    private func launchAdded(_ firstOf: NewFirstOf, added: inout [String], loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> [Int] {
        var passedOver: [String] = []
        for child in firstOf.children {
            var ids: [Int] = []
            var failure: String?
            for leaf in child.leaves {
                let id = await LaunchFlow.launchIntoCurrentState(leaf, service: fresh[leaf.name]!, loop: &loop, group: &group)
                ids.append(id)
                if let index = loop.services.firstIndex(where: { $0.id == id }), case .disabled(let reason) = loop.services[index].health.condition {
                    failure = reason
                    break
                }
            }
            guard let failure else {
                added += child.leaves.map(\.name)
                LaunchFlow.logFirstOf(firstOf.name, chose: child.name, after: passedOver, logger: loop.logger)
                return ids
            }
            passedOver.append(failure)
            for id in ids.reversed() {
                if let index = loop.services.firstIndex(where: { $0.id == id }) { await loop.terminateOne(index, group: &group) }
            }
        }
        LaunchFlow.logFirstOf(firstOf.name, chose: nil, after: passedOver, logger: loop.logger)
        return []
    }

    /// Offers the new settings to the running instance; true when it applied them.
    private static func updateLive(_ index: Int, to descriptor: ServiceDescriptor, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> Bool {
        let result = await loop.call(index, .didUpdateConfiguration(descriptor.configuration), deadline: loop.services[index].hookDeadline, configuration: descriptor.configuration, group: &group)
        var tally = HookTally()
        loop.record(result, of: .didUpdateConfiguration, at: index, in: &tally)
        guard result == .returned(true) else { return false }
        loop.services[index].descriptor = descriptor
        loop.services[index].supervisor?.policy = descriptor.restart
        loop.services[index].context = loop.services[index].context.with(configuration: descriptor.configuration)
        loop.services[index].takeDeadlines(of: descriptor, host: loop.configuration)
        return true
    }
}
