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
}
