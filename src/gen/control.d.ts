import * as $protobuf from "protobufjs";
import Long = require("long");
export namespace gensee {

    namespace v2 {

        interface ILeaseTuple {
            protocol?: (string|null);
            address?: (string|null);
            port?: (number|null);
        }

        class LeaseTuple implements ILeaseTuple {
            constructor(properties?: gensee.v2.ILeaseTuple);
            public protocol: string;
            public address: string;
            public port: number;
            public static create(properties?: gensee.v2.ILeaseTuple): gensee.v2.LeaseTuple;
            public static encode(message: gensee.v2.ILeaseTuple, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.LeaseTuple;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.LeaseTuple;
            public static toObject(message: gensee.v2.LeaseTuple, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IPolicyApply {
            policy_text?: (string|null);
            policy_hash?: (string|null);
        }

        class PolicyApply implements IPolicyApply {
            constructor(properties?: gensee.v2.IPolicyApply);
            public policy_text: string;
            public policy_hash: string;
            public static create(properties?: gensee.v2.IPolicyApply): gensee.v2.PolicyApply;
            public static encode(message: gensee.v2.IPolicyApply, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.PolicyApply;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.PolicyApply;
            public static toObject(message: gensee.v2.PolicyApply, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ILeaseAdd {
            tuple?: (gensee.v2.ILeaseTuple|null);
            ttl_ms?: (number|Long|null);
            max_uses?: (number|null);
        }

        class LeaseAdd implements ILeaseAdd {
            constructor(properties?: gensee.v2.ILeaseAdd);
            public tuple?: (gensee.v2.ILeaseTuple|null);
            public ttl_ms: (number|Long);
            public max_uses: number;
            public static create(properties?: gensee.v2.ILeaseAdd): gensee.v2.LeaseAdd;
            public static encode(message: gensee.v2.ILeaseAdd, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.LeaseAdd;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.LeaseAdd;
            public static toObject(message: gensee.v2.LeaseAdd, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ILeaseRm {
            tuple?: (gensee.v2.ILeaseTuple|null);
        }

        class LeaseRm implements ILeaseRm {
            constructor(properties?: gensee.v2.ILeaseRm);
            public tuple?: (gensee.v2.ILeaseTuple|null);
            public static create(properties?: gensee.v2.ILeaseRm): gensee.v2.LeaseRm;
            public static encode(message: gensee.v2.ILeaseRm, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.LeaseRm;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.LeaseRm;
            public static toObject(message: gensee.v2.LeaseRm, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IAttentionRaise {
            signature?: (string|null);
            detail?: (string|null);
            evidence?: ((number|Long)[]|null);
            refs?: (string[]|null);
            agent_events?: (string|null);
        }

        class AttentionRaise implements IAttentionRaise {
            constructor(properties?: gensee.v2.IAttentionRaise);
            public signature: string;
            public detail: string;
            public evidence: (number|Long)[];
            public refs: string[];
            public agent_events: string;
            public static create(properties?: gensee.v2.IAttentionRaise): gensee.v2.AttentionRaise;
            public static encode(message: gensee.v2.IAttentionRaise, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.AttentionRaise;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.AttentionRaise;
            public static toObject(message: gensee.v2.AttentionRaise, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IAttentionClear {
            by?: (string|null);
            person?: (string|null);
            note?: (string|null);
        }

        class AttentionClear implements IAttentionClear {
            constructor(properties?: gensee.v2.IAttentionClear);
            public by: string;
            public person: string;
            public note: string;
            public static create(properties?: gensee.v2.IAttentionClear): gensee.v2.AttentionClear;
            public static encode(message: gensee.v2.IAttentionClear, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.AttentionClear;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.AttentionClear;
            public static toObject(message: gensee.v2.AttentionClear, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IExecutorTool {
            cgroup_id?: (number|Long|null);
            tool_id?: (string|null);
            call_id?: (string|null);
        }

        class ExecutorTool implements IExecutorTool {
            constructor(properties?: gensee.v2.IExecutorTool);
            public cgroup_id: (number|Long);
            public tool_id: string;
            public call_id: string;
            public static create(properties?: gensee.v2.IExecutorTool): gensee.v2.ExecutorTool;
            public static encode(message: gensee.v2.IExecutorTool, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ExecutorTool;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ExecutorTool;
            public static toObject(message: gensee.v2.ExecutorTool, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IExecutorDenial {
            tool_id?: (string|null);
            call_id?: (string|null);
            reason?: (string|null);
            target?: (string|null);
            detail?: (string|null);
            pid?: (number|null);
        }

        class ExecutorDenial implements IExecutorDenial {
            constructor(properties?: gensee.v2.IExecutorDenial);
            public tool_id: string;
            public call_id: string;
            public reason: string;
            public target: string;
            public detail: string;
            public pid: number;
            public static create(properties?: gensee.v2.IExecutorDenial): gensee.v2.ExecutorDenial;
            public static encode(message: gensee.v2.IExecutorDenial, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ExecutorDenial;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ExecutorDenial;
            public static toObject(message: gensee.v2.ExecutorDenial, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IControlRequest {
            schema?: (number|null);
            policy_apply?: (gensee.v2.IPolicyApply|null);
            lease_add?: (gensee.v2.ILeaseAdd|null);
            lease_rm?: (gensee.v2.ILeaseRm|null);
            attention_raise?: (gensee.v2.IAttentionRaise|null);
            attention_clear?: (gensee.v2.IAttentionClear|null);
            executor_tool?: (gensee.v2.IExecutorTool|null);
            executor_denial?: (gensee.v2.IExecutorDenial|null);
        }

        class ControlRequest implements IControlRequest {
            constructor(properties?: gensee.v2.IControlRequest);
            public schema: number;
            public policy_apply?: (gensee.v2.IPolicyApply|null);
            public lease_add?: (gensee.v2.ILeaseAdd|null);
            public lease_rm?: (gensee.v2.ILeaseRm|null);
            public attention_raise?: (gensee.v2.IAttentionRaise|null);
            public attention_clear?: (gensee.v2.IAttentionClear|null);
            public executor_tool?: (gensee.v2.IExecutorTool|null);
            public executor_denial?: (gensee.v2.IExecutorDenial|null);
            public command?: ("policy_apply"|"lease_add"|"lease_rm"|"attention_raise"|"attention_clear"|"executor_tool"|"executor_denial");
            public static create(properties?: gensee.v2.IControlRequest): gensee.v2.ControlRequest;
            public static encode(message: gensee.v2.IControlRequest, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ControlRequest;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ControlRequest;
            public static toObject(message: gensee.v2.ControlRequest, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IControlOk {
            command?: (string|null);
            fields_json?: (string|null);
        }

        class ControlOk implements IControlOk {
            constructor(properties?: gensee.v2.IControlOk);
            public command: string;
            public fields_json: string;
            public static create(properties?: gensee.v2.IControlOk): gensee.v2.ControlOk;
            public static encode(message: gensee.v2.IControlOk, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ControlOk;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ControlOk;
            public static toObject(message: gensee.v2.ControlOk, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IControlError {
            code?: (string|null);
            message?: (string|null);
        }

        class ControlError implements IControlError {
            constructor(properties?: gensee.v2.IControlError);
            public code: string;
            public message: string;
            public static create(properties?: gensee.v2.IControlError): gensee.v2.ControlError;
            public static encode(message: gensee.v2.IControlError, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ControlError;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ControlError;
            public static toObject(message: gensee.v2.ControlError, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface IControlReply {
            schema?: (number|null);
            ok?: (gensee.v2.IControlOk|null);
            error?: (gensee.v2.IControlError|null);
        }

        class ControlReply implements IControlReply {
            constructor(properties?: gensee.v2.IControlReply);
            public schema: number;
            public ok?: (gensee.v2.IControlOk|null);
            public error?: (gensee.v2.IControlError|null);
            public outcome?: ("ok"|"error");
            public static create(properties?: gensee.v2.IControlReply): gensee.v2.ControlReply;
            public static encode(message: gensee.v2.IControlReply, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.ControlReply;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.ControlReply;
            public static toObject(message: gensee.v2.ControlReply, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }

        interface ISignedControlReply {
            reply?: (Uint8Array|null);
            mac?: (Uint8Array|null);
        }

        class SignedControlReply implements ISignedControlReply {
            constructor(properties?: gensee.v2.ISignedControlReply);
            public reply: Uint8Array;
            public mac: Uint8Array;
            public static create(properties?: gensee.v2.ISignedControlReply): gensee.v2.SignedControlReply;
            public static encode(message: gensee.v2.ISignedControlReply, writer?: $protobuf.Writer): $protobuf.Writer;
            public static decode(reader: ($protobuf.Reader|Uint8Array), length?: number): gensee.v2.SignedControlReply;
            public static verify(message: { [k: string]: any }): (string|null);
            public static fromObject(object: { [k: string]: any }): gensee.v2.SignedControlReply;
            public static toObject(message: gensee.v2.SignedControlReply, options?: $protobuf.IConversionOptions): { [k: string]: any };
            public toJSON(): { [k: string]: any };
        }
    }
}
