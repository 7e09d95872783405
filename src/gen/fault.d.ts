import * as $protobuf from "protobufjs";
import Long = require("long");
export namespace gensee {

    namespace v2 {

        enum Source {
            SOURCE_UNSPECIFIED = 0,
            SOURCE_SECCOMP_NOTIFY = 1,
            SOURCE_CGROUP_HOOK = 2,
            SOURCE_MANUAL = 3,
            SOURCE_PEER_GATEWAY = 4,
            SOURCE_EXECUTOR = 5
        }

        enum Family {
            FAMILY_UNSPECIFIED = 0,
            FAMILY_IPV4 = 1,
            FAMILY_IPV6 = 2
        }

        enum Protocol {
            PROTOCOL_UNSPECIFIED = 0,
            PROTOCOL_TCP = 1,
            PROTOCOL_UDP = 2
        }

        enum FileAccess {
            FILE_ACCESS_UNSPECIFIED = 0,
            FILE_ACCESS_READ = 1,
            FILE_ACCESS_WRITE = 2,
            FILE_ACCESS_EXEC = 3,
            FILE_ACCESS_CREATE = 4,
            FILE_ACCESS_DELETE = 5
        }

        enum StatementClass {
            STATEMENT_CLASS_UNSPECIFIED = 0,
            STATEMENT_CLASS_READ = 1,
            STATEMENT_CLASS_WRITE = 2,
            STATEMENT_CLASS_DDL = 3,
            STATEMENT_CLASS_ADMIN = 4
        }

        enum Action {
            ACTION_UNSPECIFIED = 0,
            ACTION_CONTINUE_ALREADY_AUTHORIZED = 1,
            ACTION_RETRY_AFTER_LEASE = 2,
            ACTION_DELEGATE = 3,
            ACTION_DENY = 4
        }

        interface IProcessSubject {
            pid?: (number|null);
            start_time_ticks?: (number|Long|null);
        }

        class ProcessSubject implements IProcessSubject {
            constructor(properties?: gensee.v2.IProcessSubject);
            public pid: number;
            public start_time_ticks: (number|Long);
            public static create(properties?: gensee.v2.IProcessSubject): gensee.v2.ProcessSubject;
            public static encode(message: gensee.v2.IProcessSubject, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ProcessSubject;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ProcessSubject;
            public static toObject(message: gensee.v2.ProcessSubject, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IPeerSubject {
            address?: (string|null);
        }

        class PeerSubject implements IPeerSubject {
            constructor(properties?: gensee.v2.IPeerSubject);
            public address: string;
            public static create(properties?: gensee.v2.IPeerSubject): gensee.v2.PeerSubject;
            public static encode(message: gensee.v2.IPeerSubject, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.PeerSubject;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.PeerSubject;
            public static toObject(message: gensee.v2.PeerSubject, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ISubject {
            process?: (gensee.v2.IProcessSubject|null);
            peer?: (gensee.v2.IPeerSubject|null);
        }

        class Subject implements ISubject {
            constructor(properties?: gensee.v2.ISubject);
            public process?: (gensee.v2.IProcessSubject|null);
            public peer?: (gensee.v2.IPeerSubject|null);
            public kind?: ("process"|"peer");
            public static create(properties?: gensee.v2.ISubject): gensee.v2.Subject;
            public static encode(message: gensee.v2.ISubject, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.Subject;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.Subject;
            public static toObject(message: gensee.v2.Subject, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface INetworkEffect {
            family?: (gensee.v2.Family|null);
            protocol?: (gensee.v2.Protocol|null);
            address?: (string|null);
            port?: (number|null);
        }

        class NetworkEffect implements INetworkEffect {
            constructor(properties?: gensee.v2.INetworkEffect);
            public family: gensee.v2.Family;
            public protocol: gensee.v2.Protocol;
            public address: string;
            public port: number;
            public static create(properties?: gensee.v2.INetworkEffect): gensee.v2.NetworkEffect;
            public static encode(message: gensee.v2.INetworkEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.NetworkEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.NetworkEffect;
            public static toObject(message: gensee.v2.NetworkEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IFileEffect {
            path?: (string|null);
            access?: (gensee.v2.FileAccess|null);
        }

        class FileEffect implements IFileEffect {
            constructor(properties?: gensee.v2.IFileEffect);
            public path: string;
            public access: gensee.v2.FileAccess;
            public static create(properties?: gensee.v2.IFileEffect): gensee.v2.FileEffect;
            public static encode(message: gensee.v2.IFileEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.FileEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.FileEffect;
            public static toObject(message: gensee.v2.FileEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ISyscallEffect {
            name?: (string|null);
            number?: (number|null);
            capability?: (string|null);
        }

        class SyscallEffect implements ISyscallEffect {
            constructor(properties?: gensee.v2.ISyscallEffect);
            public name: string;
            public number: number;
            public capability: string;
            public static create(properties?: gensee.v2.ISyscallEffect): gensee.v2.SyscallEffect;
            public static encode(message: gensee.v2.ISyscallEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.SyscallEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.SyscallEffect;
            public static toObject(message: gensee.v2.SyscallEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ISecretEffect {
            name?: (string|null);
            scope?: (string|null);
        }

        class SecretEffect implements ISecretEffect {
            constructor(properties?: gensee.v2.ISecretEffect);
            public name: string;
            public scope: string;
            public static create(properties?: gensee.v2.ISecretEffect): gensee.v2.SecretEffect;
            public static encode(message: gensee.v2.ISecretEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.SecretEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.SecretEffect;
            public static toObject(message: gensee.v2.SecretEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ICloudIamEffect {
            provider?: (string|null);
            action?: (string|null);
            resource?: (string|null);
        }

        class CloudIamEffect implements ICloudIamEffect {
            constructor(properties?: gensee.v2.ICloudIamEffect);
            public provider: string;
            public action: string;
            public resource: string;
            public static create(properties?: gensee.v2.ICloudIamEffect): gensee.v2.CloudIamEffect;
            public static encode(message: gensee.v2.ICloudIamEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.CloudIamEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.CloudIamEffect;
            public static toObject(message: gensee.v2.CloudIamEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IApplicationEffect {
            name?: (string|null);
            action?: (string|null);
            target?: (string|null);
        }

        class ApplicationEffect implements IApplicationEffect {
            constructor(properties?: gensee.v2.IApplicationEffect);
            public name: string;
            public action: string;
            public target: string;
            public static create(properties?: gensee.v2.IApplicationEffect): gensee.v2.ApplicationEffect;
            public static encode(message: gensee.v2.IApplicationEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ApplicationEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ApplicationEffect;
            public static toObject(message: gensee.v2.ApplicationEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IDatabaseEffect {
            engine?: (string|null);
            database?: (string|null);
            statement_class?: (gensee.v2.StatementClass|null);
            table?: (string|null);
        }

        class DatabaseEffect implements IDatabaseEffect {
            constructor(properties?: gensee.v2.IDatabaseEffect);
            public engine: string;
            public database: string;
            public statement_class: gensee.v2.StatementClass;
            public table: string;
            public static create(properties?: gensee.v2.IDatabaseEffect): gensee.v2.DatabaseEffect;
            public static encode(message: gensee.v2.IDatabaseEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.DatabaseEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.DatabaseEffect;
            public static toObject(message: gensee.v2.DatabaseEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IPromotionEffect {
            artifact?: (string|null);
            from_stage?: (string|null);
            to_stage?: (string|null);
        }

        class PromotionEffect implements IPromotionEffect {
            constructor(properties?: gensee.v2.IPromotionEffect);
            public artifact: string;
            public from_stage: string;
            public to_stage: string;
            public static create(properties?: gensee.v2.IPromotionEffect): gensee.v2.PromotionEffect;
            public static encode(message: gensee.v2.IPromotionEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.PromotionEffect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.PromotionEffect;
            public static toObject(message: gensee.v2.PromotionEffect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IEffect {
            network?: (gensee.v2.INetworkEffect|null);
            file?: (gensee.v2.IFileEffect|null);
            syscall?: (gensee.v2.ISyscallEffect|null);
            secret?: (gensee.v2.ISecretEffect|null);
            cloud_iam?: (gensee.v2.ICloudIamEffect|null);
            application?: (gensee.v2.IApplicationEffect|null);
            database?: (gensee.v2.IDatabaseEffect|null);
            promotion?: (gensee.v2.IPromotionEffect|null);
        }

        class Effect implements IEffect {
            constructor(properties?: gensee.v2.IEffect);
            public network?: (gensee.v2.INetworkEffect|null);
            public file?: (gensee.v2.IFileEffect|null);
            public syscall?: (gensee.v2.ISyscallEffect|null);
            public secret?: (gensee.v2.ISecretEffect|null);
            public cloud_iam?: (gensee.v2.ICloudIamEffect|null);
            public application?: (gensee.v2.IApplicationEffect|null);
            public database?: (gensee.v2.IDatabaseEffect|null);
            public promotion?: (gensee.v2.IPromotionEffect|null);
            public kind?: ("network"|"file"|"syscall"|"secret"|"cloud_iam"|"application"|"database"|"promotion");
            public static create(properties?: gensee.v2.IEffect): gensee.v2.Effect;
            public static encode(message: gensee.v2.IEffect, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.Effect;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.Effect;
            public static toObject(message: gensee.v2.Effect, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ICapabilityFault {
            schema?: (number|null);
            operation_id?: (string|null);
            fault_id?: (string|null);
            subject?: (gensee.v2.ISubject|null);
            effect?: (gensee.v2.IEffect|null);
            source?: (gensee.v2.Source|null);
            observed_at_boot_ns?: (number|Long|null);
            cgroup_id?: (number|Long|null);
            client_refusal?: (gensee.v2.IClientRefusal|null);
        }

        class CapabilityFault implements ICapabilityFault {
            constructor(properties?: gensee.v2.ICapabilityFault);
            public schema: number;
            public operation_id: string;
            public fault_id: string;
            public subject?: (gensee.v2.ISubject|null);
            public effect?: (gensee.v2.IEffect|null);
            public source: gensee.v2.Source;
            public observed_at_boot_ns: (number|Long);
            public cgroup_id: (number|Long);
            public client_refusal?: (gensee.v2.IClientRefusal|null);
            public static create(properties?: gensee.v2.ICapabilityFault): gensee.v2.CapabilityFault;
            public static encode(message: gensee.v2.ICapabilityFault, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.CapabilityFault;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.CapabilityFault;
            public static toObject(message: gensee.v2.CapabilityFault, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IClientRefusal {
            code?: (string|null);
            detail?: (string|null);
        }

        class ClientRefusal implements IClientRefusal {
            constructor(properties?: gensee.v2.IClientRefusal);
            public code: string;
            public detail: string;
            public static create(properties?: gensee.v2.IClientRefusal): gensee.v2.ClientRefusal;
            public static encode(message: gensee.v2.IClientRefusal, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ClientRefusal;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ClientRefusal;
            public static toObject(message: gensee.v2.ClientRefusal, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ILease {
            generation?: (number|Long|null);
            family?: (gensee.v2.Family|null);
            protocol?: (gensee.v2.Protocol|null);
            address?: (string|null);
            port?: (number|null);
            expires_at_boot_ns?: (number|Long|null);
            max_uses?: (number|null);
        }

        class Lease implements ILease {
            constructor(properties?: gensee.v2.ILease);
            public generation: (number|Long);
            public family: gensee.v2.Family;
            public protocol: gensee.v2.Protocol;
            public address: string;
            public port: number;
            public expires_at_boot_ns: (number|Long);
            public max_uses: number;
            public static create(properties?: gensee.v2.ILease): gensee.v2.Lease;
            public static encode(message: gensee.v2.ILease, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.Lease;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.Lease;
            public static toObject(message: gensee.v2.Lease, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IResolution {
            fault_id?: (string|null);
            action?: (gensee.v2.Action|null);
            reason?: (string|null);
            lease?: (gensee.v2.ILease|null);
            delegate_to?: (string|null);
            mac?: (Uint8Array|null);
        }

        class Resolution implements IResolution {
            constructor(properties?: gensee.v2.IResolution);
            public fault_id: string;
            public action: gensee.v2.Action;
            public reason: string;
            public lease?: (gensee.v2.ILease|null);
            public delegate_to: string;
            public mac: Uint8Array;
            public static create(properties?: gensee.v2.IResolution): gensee.v2.Resolution;
            public static encode(message: gensee.v2.IResolution, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.Resolution;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.Resolution;
            public static toObject(message: gensee.v2.Resolution, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }
    }
}
